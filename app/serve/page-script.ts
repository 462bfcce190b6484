/**
 * The script of the `axon serve` page, plain JavaScript served as `/page.js`: the Content-Security-Policy runs it
 * only from the script tag that carries the page's nonce, and the tag's integrity hash refuses any other text. Every
 * value from the API is inserted as text (`textContent`, SVG attributes set one by one), never as HTML.
 *
 * Sections, in order: helpers; the answer and its citations; the trace (stage columns, rank-change lines); the
 * context packet; past runs and two of them side by side; asking; agentic runs; conversations (page-script-conversations.ts);
 * the page's start.
 */
import { PAGE_CONVERSATION_SCRIPT } from './page-script-conversations.ts';

export const PAGE_SCRIPT = `"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
// The SVG namespace, from the page's inline <svg> (the HTML parser puts it there), so no URL is written in this script.
const SVG_NS = $("svg-proto").namespaceURI;
const el = (tag, props, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    // Through the CSSOM: the Content-Security-Policy refuses style attributes, not styles set from a script.
    else if (key === "style") node.style.cssText = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
};
const svgEl = (tag, attributes) => {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
};
const api = (path, init) => fetch(path, { ...init, headers: { ...(init && init.headers), "x-axon-token": token } });
const STAGE_COLORS = { "pre-process": "#a78bfa", embed: "#60a5fa", search: "#34d399", fusion: "#fbbf24", dedupe: "#f472b6", "post-process": "#fb923c", eligibility: "#94a3b8", context: "#22d3ee", generate: "#4ade80" };
const STAGE_ORDER = ["pre-process", "embed", "search", "fusion", "dedupe", "post-process", "eligibility", "context", "generate", "results"];
/** The stage record each trace column was drawn from. */
const columnStage = new WeakMap();

const ms = (value) => (value < 10 ? value.toFixed(1) : Math.round(value)) + " ms";

function setStatus(text) { $("status").textContent = text; }

function sourceLabel(run, id) { return (run.sources && run.sources[id]) || id.slice(0, 12); }
/** Why a document was dropped, naming the document it was dropped in favour of (keptId) as the CLI does. */
function dropReason(run, dropped) { return dropped.keptId ? dropped.reason + " (kept: " + sourceLabel(run, dropped.keptId) + ")" : dropped.reason; }

/**
 * A name that, when the space is short, is cut in the middle rather than at the end: the head gives way behind an
 * ellipsis and the tail (the file name, page and chunk: "copyright#3") stays, so two files of the same name in
 * different folders still differ where it matters. The whole name is the tooltip.
 */
function nameCell(label) {
  const slash = label.lastIndexOf("/");
  const cut = slash > 0 && label.length - slash - 1 <= 24 ? slash + 1 : Math.max(0, label.length - 16);
  return el("span", { class: "name", title: label }, el("span", { class: "head", text: label.slice(0, cut) }), el("span", { class: "tail", text: label.slice(cut) }));
}

/** How a citation names its chunk: source, chunk number and page ("help/account.md#2 p. 3"). */
function citationName(citation) {
  return citation.sourceName + (citation.chunkIndex !== undefined ? "#" + citation.chunkIndex : "") + (citation.pageNumber !== undefined ? " p. " + citation.pageNumber : "");
}

/** Text with the given [start, end) spans wrapped in <mark>, all inserted as text; a span that overlaps the one before extends it. */
function setMarked(node, text, spans) {
  node.textContent = "";
  let at = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    const start = Math.max(span.start, at);
    if (span.end <= start) continue;
    node.append(document.createTextNode(text.slice(at, start)), el("mark", { text: text.slice(start, span.end) }));
    at = span.end;
  }
  node.append(document.createTextNode(text.slice(at)));
}

function showChunk(source, pageText, content, spans) {
  $("chunk").classList.remove("hidden");
  $("chunk-source").textContent = source;
  $("chunk-page").textContent = pageText;
  if (content === undefined) {
    $("chunk-text").textContent = "(the chunk's text is not in this run)";
    $("chunk-note").textContent = "";
  } else {
    setMarked($("chunk-text"), content, spans);
    $("chunk-note").textContent = spans.length ? "· marked: the words the citing sentence repeats" : "· the citing sentence repeats no three words of it";
  }
  $("chunk").focus();
}

function renderAnswer(run) {
  const box = $("answer");
  box.textContent = "";
  const byLabel = new Map(run.citations.map((c) => [c.label, c]));
  const parts = run.answer.split(/(\\[\\d+\\])/);
  for (const part of parts) {
    const match = /^\\[(\\d+)\\]$/.exec(part);
    const citation = match && byLabel.get(Number(match[1]));
    box.append(citation ? citeButton(run, citation, part) : document.createTextNode(part));
  }
  const list = $("citations");
  list.textContent = "";
  for (const citation of run.citations) list.append(citeButton(run, citation, "[" + citation.label + "] " + citationName(citation)));
}

function citeButton(run, citation, text) {
  return el("button", { type: "button", class: "cite", "data-id": citation.id, "aria-label": "Open the source of citation " + citation.label, text, onclick: () => openChunk(run, citation) });
}

function openChunk(run, citation) {
  const chunk = run.chunks[citation.id];
  const page = chunk && chunk.pageNumber !== undefined ? chunk.pageNumber : citation.pageNumber;
  const pageText = (page !== undefined ? "page " + page : "") + (citation.chunkIndex !== undefined ? " · chunk " + citation.chunkIndex : "");
  showChunk((chunk && chunk.sourceName) || citation.sourceName, pageText, chunk ? chunk.content : undefined, citation.spans || []);
}
$("chunk-close").addEventListener("click", () => $("chunk").classList.add("hidden"));
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (!$("compare").classList.contains("hidden")) closeCompare();
  else $("chunk").classList.add("hidden");
});

// The adaptive threshold records its cut in each drop reason; no drop, no recorded cut.
const CUT = /adaptive threshold (-?[\\d.]+) \\(median (-?[\\d.]+) − (-?[\\d.]+) × MAD (-?[\\d.]+)\\)/;

function renderTrace(run) {
  const stages = $("stages");
  stages.textContent = "";
  const total = run.stages.reduce((sum, stage) => sum + stage.ms, 0) || 1;
  const timeline = $("timeline");
  timeline.textContent = "";
  let previous = {};
  let previousOrder = null;
  for (const stage of run.stages) {
    timeline.append(el("span", { style: "width:" + (100 * stage.ms / total) + "%;background:" + (STAGE_COLORS[stage.stage] || "#999"), title: stage.stage + " " + stage.name + ": " + ms(stage.ms) }));
    const dropped = new Map(stage.dropped.map((d) => [d.id, dropReason(run, d)]));
    const ids = [...stage.outputIds, ...stage.inputIds.filter((id) => !stage.outputIds.includes(id))];
    const score = (id) => (id in stage.scores ? stage.scores[id] : previous[id]);
    const values = ids.map(score).filter((v) => typeof v === "number");
    const cutMatch = stage.dropped.map((d) => CUT.exec(d.reason)).find(Boolean);
    const cut = cutMatch ? { threshold: Number(cutMatch[1]), median: Number(cutMatch[2]), multiplier: Number(cutMatch[3]), mad: Number(cutMatch[4]) } : null;
    // Each stage on its own scale, from its lowest score (or 0) to its highest, so negative scores still show.
    const low = Math.min(0, ...values, cut ? cut.threshold : 0);
    const high = Math.max(...values, cut ? cut.threshold : 0, low + 1e-9);
    const position = (value) => (100 * (value - low)) / (high - low);
    const column = el("div", { class: "stage", "data-stage": stage.stage, "data-name": stage.name },
      el("h3", { text: stage.stage + " · " + stage.name }),
      el("div", { class: "meta", text: stage.inputIds.length + " in → " + stage.outputIds.length + " out · " + ms(stage.ms) + (stage.queries && stage.queries.length ? " · " + stage.queries.join(" | ") : "") }));
    columnStage.set(column, stage);
    if (cut) column.append(el("div", { class: "cutlabel", "data-threshold": String(cut.threshold), text: "cut " + cut.threshold.toFixed(4) + " = median " + cut.median.toFixed(4) + " − " + cut.multiplier + " × MAD " + cut.mad.toFixed(4) }));
    for (const id of ids.slice(0, 40)) {
      const value = score(id);
      const reason = dropped.get(id);
      const track = el("div", { class: "track" }, el("div", { class: "fill", style: "width:" + (typeof value === "number" ? position(value) : 0) + "%" }));
      if (cut) track.append(el("div", { class: "cut", style: "left:" + position(cut.threshold) + "%", title: "adaptive threshold " + cut.threshold }));
      const row = el("div", { class: "row" + (reason ? " dropped" : ""), "data-id": id, title: id + (typeof value === "number" ? " score " + value : "") },
        nameCell(sourceLabel(run, id)), moveBadge(previousOrder, stage.outputIds, id), track);
      if (reason) row.append(el("div", { class: "reason", text: reason }));
      column.append(row);
    }
    if (ids.length > 40) column.append(el("div", { class: "meta", text: "… " + (ids.length - 40) + " more" }));
    for (const warning of stage.warnings) column.append(el("div", { class: "reason", text: "⚠ " + warning }));
    stages.append(column);
    previous = { ...previous, ...stage.scores };
    if (stage.outputIds.length) previousOrder = stage.outputIds;
  }
  drawLinks(stages, run);
}

// How far a document moved against the last stage that ordered documents (a reranker or fusion reorders).
function moveBadge(before, after, id) {
  const from = before ? before.indexOf(id) : -1;
  const to = after.indexOf(id);
  if (from === -1 || to === -1 || from === to) return el("span", { class: "move" });
  const up = to < from;
  return el("span", { class: "move " + (up ? "up" : "down"), title: "rank " + (from + 1) + " → " + (to + 1), text: (up ? "▲" : "▼") + Math.abs(from - to) });
}

/**
 * Lines between adjacent columns for the documents the second column put in another order: a document the first
 * column passed on (it is among the second's inputs) and both ranked, whose place among the documents both kept
 * changed. A document that only rose because one above it was dropped gets no line.
 */
function drawLinks(container, run) {
  const old = container.querySelector(":scope > svg.links");
  if (old) old.remove();
  const columns = [...container.querySelectorAll(":scope > .stage")];
  const box = container.getBoundingClientRect();
  if (box.width === 0) return;
  const svg = svgEl("svg", { class: "links", width: container.scrollWidth, height: container.scrollHeight, "aria-label": "Rank changes between stages" });
  const at = (node) => {
    const rect = node.getBoundingClientRect();
    return { left: rect.left - box.left + container.scrollLeft, right: rect.right - box.left + container.scrollLeft, y: rect.top - box.top + container.scrollTop + rect.height / 2 };
  };
  const rowOf = (column, id) => [...column.querySelectorAll(":scope > .row")].find((row) => row.getAttribute("data-id") === id);
  for (let index = 0; index + 1 < columns.length; index++) {
    const before = columnStage.get(columns[index]);
    const after = columnStage.get(columns[index + 1]);
    const kept = before.outputIds.filter((id) => after.outputIds.includes(id) && after.inputIds.includes(id));
    const keptAfter = after.outputIds.filter((id) => kept.includes(id));
    for (const id of kept) {
      if (kept.indexOf(id) === keptAfter.indexOf(id)) continue;
      const from = before.outputIds.indexOf(id);
      const to = after.outputIds.indexOf(id);
      const rowA = rowOf(columns[index], id);
      const rowB = rowOf(columns[index + 1], id);
      if (!rowA || !rowB) continue;
      const a = at(rowA);
      const b = at(rowB);
      const direction = to < from ? "up" : "down";
      const line = svgEl("line", { x1: a.right, y1: a.y, x2: b.left, y2: b.y, class: direction, "data-id": id, "data-from": index, "data-to": index + 1, "data-from-rank": from + 1, "data-to-rank": to + 1 });
      const title = svgEl("title", {});
      title.textContent = sourceLabel(run, id) + ": rank " + (from + 1) + " → " + (to + 1) + " (" + after.name + ")";
      line.append(title);
      svg.append(line, svgEl("circle", { cx: a.right, cy: a.y, r: 2.5, class: direction }), svgEl("circle", { cx: b.left, cy: b.y, r: 2.5, class: direction }));
    }
  }
  container.append(svg);
}
let traceShown = null;
window.addEventListener("resize", () => { if (traceShown) drawLinks($("stages"), traceShown); });

function renderPacket(run) {
  const box = $("packet");
  box.textContent = "";
  const packet = run.packet;
  box.append(el("p", { text: "Budget: " + packet.budget.used + " of " + packet.budget.maxTokens + " tokens used (" + packet.budget.reservedForOutput + " reserved for the answer) · tokenizer " + packet.tokenizer }));
  const table = el("table", {}, el("tr", {}, el("th", { text: "section" }), el("th", { text: "title" }), el("th", { text: "trust" }), el("th", { text: "tokens" })));
  for (const section of packet.sections) table.append(el("tr", {}, el("td", { text: section.kind + (section.label ? " [" + section.label + "]" : "") }), el("td", { text: section.title }), el("td", { text: section.trustLevel }), el("td", { text: String(section.tokens) })));
  box.append(table);
  if (packet.omitted.length) {
    box.append(el("h2", { text: "Left out" }));
    const omitted = el("table", {});
    for (const item of packet.omitted) omitted.append(el("tr", { class: "omitted" }, el("td", { text: item.sourceName || sourceLabel(run, item.ref) }), el("td", { text: item.reason }), el("td", { text: item.detail || "" })));
    box.append(omitted);
  }
  for (const degradation of packet.degradations) box.append(el("p", { text: "⚠ " + degradation.kind + ": " + degradation.detail }));
}

function showTrace(run, title) {
  traceShown = run;
  $("trace-title").textContent = title || "Trace";
  renderTrace(run);
}

function showRun(run) {
  renderAnswer(run);
  showTrace(run);
  renderPacket(run);
  setStatus(run.status + (run.stopReason !== run.status ? " (" + run.stopReason + ")" : "") + " · " + ms(run.ms) + usageText(run.usage) + " · run " + run.runId.slice(0, 8));
}

// The run's usage in the status line: tokens as the services counted them, calls they did not count, the cost with its table's date.
function usageText(usage) {
  if (!usage || !usage.entries) return "";
  const sum = (field) => usage.entries.reduce((total, entry) => total + (entry[field] || 0), 0);
  const parts = [];
  const input = sum("inputTokens"), output = sum("outputTokens"), units = sum("searchUnits");
  if (input) parts.push(input + " in");
  if (output) parts.push(output + " out");
  if (units) parts.push(units + " search units");
  if (usage.unknownCalls) parts.push(usage.unknownCalls + " calls without usage");
  if (usage.pricesAsOf) parts.push(usage.cost !== undefined ? usage.cost.toPrecision(3) + " " + usage.currency + " (prices of " + usage.pricesAsOf + (usage.unpriced ? ", some unpriced" : "") + ")" : "cost unknown");
  return parts.length ? " · " + parts.join(", ") : "";
}

function clearViews() {
  for (const id of ["answer", "citations", "stages", "timeline", "packet", "iterations", "searched"]) $(id).textContent = "";
  $("searched").classList.add("hidden");
  $("trace-title").textContent = "Trace";
  traceShown = null;
  $("agentic-view").classList.add("hidden");
  $("chunk").classList.add("hidden");
  closeCompare();
}

// --- Past runs, and two of them side by side ---

/** Ticked run ids, in the order ticked; ticking a third unticks the first. */
const picks = [];

function onPick(box) {
  const id = box.getAttribute("data-pick");
  const at = picks.indexOf(id);
  if (box.checked && at === -1) picks.push(id);
  if (!box.checked && at !== -1) picks.splice(at, 1);
  while (picks.length > 2) {
    const first = picks.shift();
    const other = [...document.querySelectorAll("#runs input.pick")].find((input) => input.getAttribute("data-pick") === first);
    if (other) other.checked = false;
  }
  $("compare-open").disabled = picks.length !== 2;
  $("compare-hint").textContent = picks.length === 2 ? "Two runs ticked." : "Tick two runs to compare them (" + picks.length + " ticked).";
}

async function loadRuns() {
  const response = await api("/api/runs");
  if (!response.ok) return;
  const { runs } = await response.json();
  const list = $("runs");
  list.textContent = "";
  for (const run of runs.slice(0, 100)) {
    const when = new Date(run.startedAt).toLocaleString();
    const pick = el("input", { type: "checkbox", class: "pick", "data-pick": run.runId, "aria-label": "Tick to compare: " + run.question + " (" + when + ")", onchange: (event) => onPick(event.target) });
    pick.checked = picks.includes(run.runId);
    list.append(el("li", {}, pick, el("button", { type: "button", "data-run": run.runId, "data-kind": run.kind, onclick: () => openRun(run.runId) },
      document.createTextNode(run.question), el("small", { text: when + " · " + run.status + (run.kind === "agentic" ? " · agentic" : "") }))));
  }
}

async function fetchRun(id) {
  const response = await api("/api/runs/" + encodeURIComponent(id));
  const body = await response.json();
  if (!response.ok) throw new Error(body.error);
  return body;
}

async function openRun(id) {
  let body;
  try { body = await fetchRun(id); } catch (error) { return setStatus(error.message); }
  $("question").value = body.question;
  clearViews();
  if (body.kind === "agentic") {
    for (const step of body.steps || []) onAgenticStep(step);
    showAgenticResult(body);
  } else showRun(body);
}

/** One list of candidates per stage (or the results of an agentic run), keyed by stage and occurrence: "search#2". */
function candidateLists(run) {
  if (run.kind === "agentic") {
    const labels = Object.fromEntries(run.results.map((item) => [item.id, item.sourceName + (item.pageNumber !== undefined ? ":" + item.pageNumber : "")]));
    return [{ key: "results#1", stage: "results", name: "agentic results", ids: run.results.map((item) => item.id), dropped: new Map(), label: (id) => labels[id] || id.slice(0, 12) }];
  }
  const seen = {};
  return run.stages.map((stage) => {
    seen[stage.stage] = (seen[stage.stage] || 0) + 1;
    return { key: stage.stage + "#" + seen[stage.stage], stage: stage.stage, name: stage.name, ids: stage.outputIds, dropped: new Map(stage.dropped.map((d) => [d.id, dropReason(run, d)])), label: (id) => sourceLabel(run, id) };
  });
}

function compareSide(list, other, letter, otherLetter) {
  if (!list) return el("p", { class: "none", text: "No such stage in run " + letter + "." });
  const side = el("ol", { class: "side", "data-side": letter.toLowerCase() });
  const otherIds = other ? other.ids : [];
  list.ids.forEach((id, index) => {
    const there = otherIds.indexOf(id);
    const diff = there === -1 ? "only" : there === index ? "same" : "moved";
    const droppedThere = other && other.dropped.get(id);
    const tag = diff === "only" ? (droppedThere ? "dropped in " + otherLetter : "only in " + letter) : diff === "moved" ? (there > index ? "▲" : "▼") + Math.abs(there - index) + " (#" + (there + 1) + " in " + otherLetter + ")" : "";
    side.append(el("li", { class: "crow", "data-id": id, "data-rank": String(index + 1), "data-diff": diff, title: droppedThere ? "dropped in run " + otherLetter + ": " + droppedThere : id },
      el("span", { text: (index + 1) + "." }), nameCell(list.label(id)), el("span", { class: "tag", text: tag })));
  });
  for (const [id, reason] of list.dropped) {
    side.append(el("li", { class: "crow dropped", "data-id": id, "data-diff": "dropped", title: reason },
      el("span", { text: "–" }), nameCell(list.label(id)), el("span", { class: "tag", text: "dropped" })));
  }
  if (!list.ids.length && !list.dropped.size) side.append(el("li", { class: "none", text: "(no documents)" }));
  return side;
}

function runCard(run, letter) {
  const counts = run.kind === "agentic" ? run.iterations + " rounds · " + run.subQueries + " sub-queries" : run.stages.length + " stages";
  return el("div", { class: "cmp-run", "data-side": letter.toLowerCase() },
    el("h3", { text: letter + ": " + run.question }),
    el("div", { class: "meta", text: "run " + run.runId.slice(0, 8) + " · " + run.kind + " · " + run.status + " (" + run.stopReason + ") · " + counts + " · " + ms(run.ms) }),
    el("div", { class: "cmp-answer", text: run.answer || "(no answer)" }));
}

function renderCompare(a, b) {
  const body = $("compare-body");
  body.textContent = "";
  body.append(el("div", { class: "cmp-grid" }, runCard(a, "A"), runCard(b, "B")));
  body.append(el("p", { class: "hint", id: "compare-answers", text: a.answer === b.answer ? "Same answer text." : "The answers differ." }));
  const left = new Map(candidateLists(a).map((list) => [list.key, list]));
  const right = new Map(candidateLists(b).map((list) => [list.key, list]));
  const rank = (key) => { const [stage, n] = key.split("#"); return STAGE_ORDER.indexOf(stage) * 1000 + Number(n); };
  const keys = [...new Set([...left.keys(), ...right.keys()])].sort((x, y) => rank(x) - rank(y));
  for (const key of keys) {
    const la = left.get(key);
    const lb = right.get(key);
    const onlyA = la ? la.ids.filter((id) => !(lb ? lb.ids : []).includes(id)).length : 0;
    const onlyB = lb ? lb.ids.filter((id) => !(la ? la.ids : []).includes(id)).length : 0;
    const moved = la && lb ? la.ids.filter((id) => lb.ids.includes(id) && lb.ids.indexOf(id) !== la.ids.indexOf(id)).length : 0;
    const [stage, n] = key.split("#");
    const names = (la ? la.name : "—") + " | " + (lb ? lb.name : "—");
    body.append(el("div", { class: "pair", "data-key": key },
      el("h3", { text: stage + (n !== "1" ? " #" + n : "") + " · " + names }),
      el("div", { class: "summary", text: onlyA + " only in A · " + onlyB + " only in B · " + moved + " at another rank" }),
      el("div", { class: "cmp-grid" }, compareSide(la, lb, "A", "B"), compareSide(lb, la, "B", "A"))));
  }
}

async function openCompare() {
  if (picks.length !== 2) return;
  let runs;
  try { runs = await Promise.all(picks.map(fetchRun)); } catch (error) { return setStatus(error.message); }
  // The older run is A.
  runs.sort((x, y) => (x.startedAt || "").localeCompare(y.startedAt || ""));
  renderCompare(runs[0], runs[1]);
  $("single").classList.add("hidden");
  $("compare").classList.remove("hidden");
  $("compare").focus();
  setStatus("Comparing runs " + runs[0].runId.slice(0, 8) + " (A) and " + runs[1].runId.slice(0, 8) + " (B)");
}

function closeCompare() {
  if ($("compare").classList.contains("hidden")) return;
  $("compare").classList.add("hidden");
  $("single").classList.remove("hidden");
  if (traceShown) drawLinks($("stages"), traceShown);
  $("compare-open").focus();
}
$("compare-open").addEventListener("click", openCompare);
$("compare-close").addEventListener("click", closeCompare);

// --- Asking ---

async function ask(question) {
  $("send").disabled = true;
  searched = "";
  clearViews();
  setStatus("Asking…");
  const topK = Number($("top-k").value);
  const mode = $("mode").value;
  const request = { question, conversationId, ...($("agentic").checked ? { agentic: true } : {}), ...(topK > 0 ? { topK } : {}), ...(mode ? { searchMode: mode } : {}) };
  try {
    const response = await api("/api/ask", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
    if (!response.ok || !response.body) {
      const body = await response.json().catch(() => ({}));
      return setStatus("Error: " + (body.error || response.status));
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\\n\\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block);
        const data = /^data: (.*)$/m.exec(block);
        if (event && data) onEvent(event[1], JSON.parse(data[1]));
      }
    }
    await loadRuns();
    await loadConversations();
  } catch (error) {
    setStatus("Error: " + error.message);
  } finally {
    $("send").disabled = false;
  }
}

/** The pipeline searches a step ran (a sub-query's, or the probe's per retriever), with their stage records. */
function searchesOf(step) {
  const output = step.output || {};
  if (output.pipeline) return [{ label: step.input.retriever + ": “" + step.input.query + "”", pipeline: output.pipeline }];
  if (Array.isArray(output.searches)) return output.searches.filter((search) => search.pipeline).map((search) => ({ label: search.retriever + ": “" + step.input.query + "”", pipeline: search.pipeline }));
  return [];
}

function showSearchTrace(search, round) {
  showTrace({ stages: search.pipeline.stages, sources: search.pipeline.sources }, "Trace of the search " + search.label + " (" + round + ")");
}

// Agentic runs: one column per iteration, each step as it starts (in progress) and again when it ends.
function onAgenticStep(event) {
  $("agentic-view").classList.remove("hidden");
  let column = document.querySelector('#iterations .stage[data-iteration="' + event.iteration + '"]');
  const round = event.iteration === 0 ? "round 0, the probe" : "round " + event.iteration;
  if (!column) {
    column = el("div", { class: "stage", "data-iteration": String(event.iteration) }, el("h3", { text: event.iteration === 0 ? "Round 0 (probe)" : "Round " + event.iteration }));
    $("iterations").append(column);
  }
  const summary = event.input.query || (event.output && event.output.subQueries ? JSON.stringify(event.output.subQueries.map((q) => q.query || q)) : "")
    || (event.output && "sufficient" in event.output ? (event.output.sufficient ? "sufficient" : "not sufficient: " + (event.output.missing || "")) : "")
    || (event.output && "results" in event.output ? event.output.results + " results" : "");
  const row = el("div", { class: "step " + event.status, "data-step": event.step, "data-status": event.status },
    el("span", { class: "kind", text: event.step }), document.createTextNode(" · " + event.status + (event.ms !== undefined ? " · " + ms(event.ms) : "") + (summary ? " · " + summary : "")));
  for (const search of searchesOf(event)) {
    row.append(el("button", { type: "button", class: "plain", "data-search": search.label, "aria-label": "Show the stages of the search " + search.label, text: "stages", onclick: () => showSearchTrace(search, round) }));
    if (!traceShown) showSearchTrace(search, round);
  }
  for (const warning of event.warnings) row.append(el("div", { class: "reason", text: "⚠ " + warning }));
  const existing = column.querySelector('[data-step-id="' + event.stepId + '"]');
  row.setAttribute("data-step-id", String(event.stepId));
  if (existing) existing.replaceWith(row); else column.append(row);
}

function showAgenticResult(run) {
  const box = $("answer");
  box.textContent = "";
  const list = $("citations");
  list.textContent = "";
  const open = (index, spans) => {
    const item = run.results[index];
    showChunk(item.sourceName, item.pageNumber !== undefined ? "page " + item.pageNumber : "", item.content, spans);
  };
  let at = 0;
  for (const citation of [...run.citations].sort((a, b) => a.startIndex - b.startIndex)) {
    if (citation.startIndex < at) continue;
    box.append(document.createTextNode(run.answer.slice(at, citation.startIndex)), el("mark", { text: run.answer.slice(citation.startIndex, citation.endIndex) }));
    for (const reference of citation.references) {
      box.append(el("button", { type: "button", class: "cite", "aria-label": "Open result " + (reference.resultIndex + 1), text: "[" + (reference.resultIndex + 1) + "]", onclick: () => open(reference.resultIndex, reference.spans || []) }));
    }
    at = citation.endIndex;
  }
  box.append(document.createTextNode(run.answer.slice(at)));
  run.results.forEach((item, index) => {
    const found = item.provenance.map((p) => "round " + p.iteration + " “" + p.query + "” #" + p.rank).join("; ");
    const spans = run.citations.flatMap((citation) => citation.references.filter((reference) => reference.resultIndex === index).flatMap((reference) => reference.spans || []));
    list.append(el("button", { type: "button", class: "cite", title: found, text: "[" + (index + 1) + "] " + item.sourceName, onclick: () => open(index, spans) }));
  });
  $("packet").textContent = "";
  $("packet").append(el("p", { class: "hint", text: "An agentic run builds no context packet: the model is given the results above, best first, up to its character budget." }));
  setStatus(run.status + " (" + run.stopReason + ") · " + run.iterations + " rounds · " + run.subQueries + " sub-queries · " + run.searches + " searches · planner " + run.planner + " · " + ms(run.ms) + " · run " + run.runId.slice(0, 8));
}

// How many documents the store held when the question was asked (the server's "store" event), said with the result.
let searched = "";

function onEvent(type, data) {
  if (type === "store") searched = " · searched " + data.documents + " document" + (data.documents === 1 ? "" : "s");
  else if (type === "agentic") return onAgenticStep(data);
  else if (type === "agentic-result") showAgenticResult(data);
  else if (type === "stage") setStatus("… " + data.stage + " (" + data.name + ") done in " + data.ms + " ms");
  else if (type === "delta") $("answer").append(document.createTextNode(data.text));
  else if (type === "result") showRun(data);
  else if (type === "error") setStatus("Error: " + data.error);
  if ((type === "result" || type === "agentic-result") && searched) $("status").textContent += searched;
  if (type === "result" || type === "agentic-result") onTurn(data);
}

${PAGE_CONVERSATION_SCRIPT}$("new-conversation").addEventListener("click", startConversation);
$("ask").addEventListener("submit", (event) => { event.preventDefault(); const q = $("question").value.trim(); if (q) ask(q); });
$("question").addEventListener("keydown", (event) => { if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("ask").requestSubmit(); });
loadRuns();
loadConversations();
`;
