/**
 * The page `axon serve` sends: one self-contained document, inline CSS and vanilla JS, no external requests
 * (the server's Content-Security-Policy forbids them). Every value from the API is inserted with `textContent`,
 * never as HTML.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Axon</title>
<style>
  :root { --fg: #1d232a; --muted: #5f6b76; --line: #d6dbe0; --accent: #2457c5; --bar: #5b8def; --drop: #b8bec4; --cut: #c2410c; --bg: #fff; --panel: #f5f7f9; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
  header { padding: 10px 16px; border-bottom: 1px solid var(--line); display: flex; gap: 12px; align-items: baseline; }
  header h1 { font-size: 16px; margin: 0; }
  main { display: grid; grid-template-columns: 240px 1fr; min-height: calc(100vh - 45px); }
  nav { border-right: 1px solid var(--line); padding: 12px; background: var(--panel); overflow: auto; }
  nav h2, section h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 4px 0 8px; }
  nav ol { list-style: none; margin: 0; padding: 0; }
  nav button { width: 100%; text-align: left; border: 0; background: none; padding: 6px; border-radius: 4px; cursor: pointer; font: inherit; }
  nav button:hover, nav button:focus-visible { background: #e3e8ee; }
  nav small { display: block; color: var(--muted); }
  .content { padding: 12px 16px; min-width: 0; }
  form { display: flex; gap: 8px; }
  textarea { flex: 1; font: inherit; padding: 8px; border: 1px solid var(--line); border-radius: 4px; resize: vertical; min-height: 40px; }
  button.primary { font: inherit; padding: 8px 14px; border: 0; border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
  button:focus-visible, textarea:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
  #answer { white-space: pre-wrap; padding: 10px; border: 1px solid var(--line); border-radius: 4px; min-height: 48px; margin: 10px 0; }
  #status { color: var(--muted); font-size: 12px; }
  .cite { font: inherit; font-size: 12px; color: var(--accent); background: #eaf0fc; border: 1px solid #c6d5f5; border-radius: 3px; padding: 0 4px; cursor: pointer; }
  #citations { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 10px; }
  #chunk { border: 1px solid var(--accent); border-radius: 4px; padding: 10px; margin-bottom: 12px; background: #f8faff; }
  #chunk pre { white-space: pre-wrap; margin: 6px 0 0; font: 13px/1.45 ui-monospace, monospace; max-height: 260px; overflow: auto; }
  #chunk .close { float: right; }
  .stages { display: flex; align-items: flex-start; gap: 10px; overflow-x: auto; padding-bottom: 8px; }
  .stage { flex: 0 0 230px; border: 1px solid var(--line); border-radius: 4px; padding: 6px; position: relative; }
  .stage h3 { font-size: 12px; margin: 0 0 2px; }
  .stage .meta { font-size: 11px; color: var(--muted); margin-bottom: 6px; }
  .row { display: grid; grid-template-columns: 1fr 26px 70px; gap: 4px; font-size: 11px; align-items: center; margin: 2px 0; }
  .row .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  .row .track { position: relative; height: 9px; background: #eef1f4; border-radius: 2px; }
  .row .fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--bar); border-radius: 2px; }
  .row.dropped .name { color: var(--muted); text-decoration: line-through; }
  .row.dropped .fill { background: var(--drop); }
  .move { font-size: 10px; text-align: right; color: var(--muted); }
  .move.up { color: #15803d; } .move.down { color: #b91c1c; }
  .reason { grid-column: 1 / -1; color: var(--muted); font-size: 10.5px; margin: -1px 0 3px; }
  .cut { position: absolute; top: -2px; bottom: -2px; width: 2px; background: var(--cut); }
  .cutlabel { font-size: 11px; color: var(--cut); margin-bottom: 4px; }
  .timeline { display: flex; height: 14px; border-radius: 3px; overflow: hidden; margin: 6px 0 10px; border: 1px solid var(--line); }
  .timeline:empty { display: none; }
  .timeline span { display: block; height: 100%; min-width: 2px; }
  table { border-collapse: collapse; font-size: 12px; }
  td, th { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left; }
  .hidden { display: none; }
  .option { display: block; margin: 6px 0 0; font-size: 13px; color: var(--muted); }
  .step { font-size: 11.5px; border-top: 1px solid var(--line); padding: 3px 0; }
  .step .kind { font-weight: 600; }
  .step.inProgress { color: var(--muted); font-style: italic; }
  .step.failed .kind { color: #b91c1c; }
  mark { background: #fff3bf; }
  @media (max-width: 760px) { main { grid-template-columns: 1fr; } nav { border-right: 0; border-bottom: 1px solid var(--line); max-height: 180px; } form { flex-direction: column; } }
</style>
</head>
<body>
<header><h1>Axon</h1><span id="status" role="status" aria-live="polite">Ready.</span></header>
<main>
  <nav aria-label="Past runs"><h2>Past runs</h2><ol id="runs"></ol></nav>
  <div class="content">
    <form id="ask">
      <label for="question" class="hidden">Question</label>
      <textarea id="question" name="question" placeholder="Ask a question (Ctrl+Enter to send)" required></textarea>
      <button class="primary" type="submit" id="send">Ask</button>
    </form>
    <label class="option"><input type="checkbox" id="agentic"> Agentic: plan sub-queries and retrieve in rounds</label>
    <section aria-label="Answer"><div id="answer" aria-live="polite"></div><div id="citations"></div></section>
    <section id="chunk" class="hidden" aria-label="Cited chunk" tabindex="-1">
      <button class="cite close" type="button" id="chunk-close" aria-label="Close the chunk">×</button>
      <strong id="chunk-source"></strong> <span id="chunk-page"></span><pre id="chunk-text"></pre>
    </section>
    <section id="agentic-view" class="hidden" aria-label="Agentic iterations"><h2>Iterations</h2><div id="iterations" class="stages"></div></section>
    <section aria-label="Trace"><h2>Trace</h2><div id="timeline" class="timeline" aria-label="Stage timings"></div><div id="stages" class="stages"></div></section>
    <section aria-label="Context packet"><h2>Context packet</h2><div id="packet"></div></section>
  </div>
</main>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
const el = (tag, props, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key === "style") node.setAttribute("style", value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
};
const api = (path, init) => fetch(path, { ...init, headers: { ...(init && init.headers), "x-axon-token": token } });
const STAGE_COLORS = { "pre-process": "#a78bfa", embed: "#60a5fa", search: "#34d399", fusion: "#fbbf24", dedupe: "#f472b6", "post-process": "#fb923c", eligibility: "#94a3b8", context: "#22d3ee", generate: "#4ade80" };
let current = null;

const ms = (value) => (value < 10 ? value.toFixed(1) : Math.round(value)) + " ms";

function setStatus(text) { $("status").textContent = text; }

function sourceLabel(run, id) { return (run.sources && run.sources[id]) || id.slice(0, 12); }

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
  for (const citation of run.citations) {
    const page = citation.pageNumber !== undefined ? " p. " + citation.pageNumber : "";
    list.append(citeButton(run, citation, "[" + citation.label + "] " + citation.sourceName + page));
  }
}

function citeButton(run, citation, text) {
  return el("button", { type: "button", class: "cite", "data-id": citation.id, "aria-label": "Open the source of citation " + citation.label, text, onclick: () => openChunk(run, citation) });
}

function openChunk(run, citation) {
  const chunk = run.chunks[citation.id];
  $("chunk").classList.remove("hidden");
  $("chunk-source").textContent = (chunk && chunk.sourceName) || citation.sourceName;
  const page = chunk && chunk.pageNumber !== undefined ? chunk.pageNumber : citation.pageNumber;
  $("chunk-page").textContent = (page !== undefined ? "page " + page : "") + (citation.chunkIndex !== undefined ? " · chunk " + citation.chunkIndex : "");
  $("chunk-text").textContent = chunk ? chunk.content : "(the chunk's text is not in this run)";
  $("chunk").focus();
}
$("chunk-close").addEventListener("click", () => $("chunk").classList.add("hidden"));
document.addEventListener("keydown", (event) => { if (event.key === "Escape") $("chunk").classList.add("hidden"); });

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
    const dropped = new Map(stage.dropped.map((d) => [d.id, d.reason]));
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
    if (cut) column.append(el("div", { class: "cutlabel", "data-threshold": String(cut.threshold), text: "cut " + cut.threshold.toFixed(4) + " = median " + cut.median.toFixed(4) + " − " + cut.multiplier + " × MAD " + cut.mad.toFixed(4) }));
    for (const id of ids.slice(0, 40)) {
      const value = score(id);
      const reason = dropped.get(id);
      const track = el("div", { class: "track" }, el("div", { class: "fill", style: "width:" + (typeof value === "number" ? position(value) : 0) + "%" }));
      if (cut) track.append(el("div", { class: "cut", style: "left:" + position(cut.threshold) + "%", title: "adaptive threshold " + cut.threshold }));
      const row = el("div", { class: "row" + (reason ? " dropped" : ""), "data-id": id, title: id + (typeof value === "number" ? " score " + value : "") },
        el("span", { class: "name", text: sourceLabel(run, id) }), moveBadge(previousOrder, stage.outputIds, id), track);
      if (reason) row.append(el("div", { class: "reason", text: reason }));
      column.append(row);
    }
    if (ids.length > 40) column.append(el("div", { class: "meta", text: "… " + (ids.length - 40) + " more" }));
    for (const warning of stage.warnings) column.append(el("div", { class: "reason", text: "⚠ " + warning }));
    stages.append(column);
    previous = { ...previous, ...stage.scores };
    if (stage.outputIds.length) previousOrder = stage.outputIds;
  }
}

// How far a document moved against the last stage that ordered documents (a reranker or fusion reorders).
function moveBadge(before, after, id) {
  const from = before ? before.indexOf(id) : -1;
  const to = after.indexOf(id);
  if (from === -1 || to === -1 || from === to) return el("span", { class: "move" });
  const up = to < from;
  return el("span", { class: "move " + (up ? "up" : "down"), title: "rank " + (from + 1) + " → " + (to + 1), text: (up ? "▲" : "▼") + Math.abs(from - to) });
}

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

function showRun(run) {
  current = run;
  renderAnswer(run);
  renderTrace(run);
  renderPacket(run);
  setStatus(run.status + (run.stopReason !== run.status ? " (" + run.stopReason + ")" : "") + " · " + ms(run.ms) + " · run " + run.runId.slice(0, 8));
}

async function loadRuns() {
  const response = await api("/api/runs");
  if (!response.ok) return;
  const { runs } = await response.json();
  const list = $("runs");
  list.textContent = "";
  for (const run of runs.slice(0, 100)) {
    list.append(el("li", {}, el("button", { type: "button", "data-run": run.runId, onclick: () => openRun(run.runId) },
      document.createTextNode(run.question), el("small", { text: new Date(run.startedAt).toLocaleString() + " · " + run.status }))));
  }
}

async function openRun(id) {
  const response = await api("/api/runs/" + encodeURIComponent(id));
  const body = await response.json();
  if (!response.ok) return setStatus(body.error);
  $("question").value = body.question;
  $("chunk").classList.add("hidden");
  $("agentic-view").classList.add("hidden");
  showRun(body);
}

async function ask(question) {
  $("send").disabled = true;
  $("answer").textContent = "";
  $("citations").textContent = "";
  $("stages").textContent = "";
  $("timeline").textContent = "";
  $("packet").textContent = "";
  $("iterations").textContent = "";
  $("agentic-view").classList.add("hidden");
  $("chunk").classList.add("hidden");
  setStatus("Asking…");
  try {
    const response = await api("/api/ask", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ question, ...($("agentic").checked ? { agentic: true } : {}) }) });
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
  } catch (error) {
    setStatus("Error: " + error.message);
  } finally {
    $("send").disabled = false;
  }
}

// Agentic runs: one column per iteration, each step as it starts (in progress) and again when it ends.
function onAgenticStep(event) {
  $("agentic-view").classList.remove("hidden");
  let column = document.querySelector('#iterations .stage[data-iteration="' + event.iteration + '"]');
  if (!column) {
    column = el("div", { class: "stage", "data-iteration": String(event.iteration) }, el("h3", { text: event.iteration === 0 ? "Round 0 (probe)" : "Round " + event.iteration }));
    $("iterations").append(column);
  }
  const summary = event.input.query || (event.output && event.output.subQueries ? JSON.stringify(event.output.subQueries.map((q) => q.query || q)) : "")
    || (event.output && "sufficient" in event.output ? (event.output.sufficient ? "sufficient" : "not sufficient: " + (event.output.missing || "")) : "")
    || (event.output && "results" in event.output ? event.output.results + " results" : "");
  const row = el("div", { class: "step " + event.status, "data-step": event.step, "data-status": event.status },
    el("span", { class: "kind", text: event.step }), document.createTextNode(" · " + event.status + (event.ms !== undefined ? " · " + ms(event.ms) : "") + (summary ? " · " + summary : "")));
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
  const open = (index) => {
    const item = run.results[index];
    $("chunk").classList.remove("hidden");
    $("chunk-source").textContent = item.sourceName;
    $("chunk-page").textContent = item.pageNumber !== undefined ? "page " + item.pageNumber : "";
    $("chunk-text").textContent = item.content;
    $("chunk").focus();
  };
  let at = 0;
  for (const citation of [...run.citations].sort((a, b) => a.startIndex - b.startIndex)) {
    if (citation.startIndex < at) continue;
    box.append(document.createTextNode(run.answer.slice(at, citation.startIndex)), el("mark", { text: run.answer.slice(citation.startIndex, citation.endIndex) }));
    for (const reference of citation.references) {
      box.append(el("button", { type: "button", class: "cite", "aria-label": "Open result " + (reference.resultIndex + 1), text: "[" + (reference.resultIndex + 1) + "]", onclick: () => open(reference.resultIndex) }));
    }
    at = citation.endIndex;
  }
  box.append(document.createTextNode(run.answer.slice(at)));
  run.results.forEach((item, index) => {
    const found = item.provenance.map((p) => "round " + p.iteration + " “" + p.query + "” #" + p.rank).join("; ");
    list.append(el("button", { type: "button", class: "cite", title: found, text: "[" + (index + 1) + "] " + item.sourceName, onclick: () => open(index) }));
  });
  setStatus(run.status + " (" + run.stopReason + ") · " + run.iterations + " rounds · " + run.subQueries + " sub-queries · " + run.searches + " searches · planner " + run.planner + " · " + ms(run.ms));
}

function onEvent(type, data) {
  if (type === "agentic") return onAgenticStep(data);
  if (type === "agentic-result") return showAgenticResult(data);
  if (type === "stage") setStatus("… " + data.stage + " (" + data.name + ") done in " + data.ms + " ms");
  else if (type === "delta") $("answer").append(document.createTextNode(data.text));
  else if (type === "result") showRun(data);
  else if (type === "error") setStatus("Error: " + data.error);
}

$("ask").addEventListener("submit", (event) => { event.preventDefault(); const q = $("question").value.trim(); if (q) ask(q); });
$("question").addEventListener("keydown", (event) => { if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("ask").requestSubmit(); });
loadRuns();
</script>
</body>
</html>
`;
