import type { Answer } from '../../src/rag.ts';
import type { DroppedDocument, RunTrace, StageRecord } from '../../src/pipeline/trace.ts';
import { formatCitation } from '../../src/context/evidence.ts';
import type { ContextPacket } from '../../src/context/packet.ts';
import type { RunUsage, UsageEntry } from '../../src/pipeline/usage.ts';

/** The answer, then its citations as `[n] source:page#chunk`. */
export function formatAnswer(answer: Answer): string {
  const lines = [answer.status === 'answered' ? answer.text.trim() : `[${answer.status}] ${answer.text.trim()}`];
  for (const sentence of answer.uncitedSentences ?? []) lines.push(`  (uncited: ${JSON.stringify(sentence)})`);
  if (answer.citations.length > 0) {
    lines.push('', 'Citations:');
    for (const citation of answer.citations) lines.push(`  [${citation.label}] ${formatCitation(citation)}  (${citation.id})`);
  }
  return lines.join('\n');
}

/**
 * One block per stage: what went in, what came out, the best scores, what was dropped and why. Documents are
 * named `source#chunk` (from the trace's `sources`; the id's first 12 characters for a trace without them), and
 * so is the document a drop was in favour of. A stage whose best documents and scores are those of the stage
 * before prints no `top:` line of its own, and `generate` lists what the answer cited.
 */
export function formatTrace(trace: RunTrace, options: { maxScores?: number; maxDropped?: number } = {}): string {
  const maxScores = options.maxScores ?? 5;
  const maxDropped = options.maxDropped ?? 5;
  const name = documentNamer(trace.sources);
  const lines = [`Trace ${trace.runId}  (${trace.ms} ms)  question: ${JSON.stringify(trace.question)}`];
  let previousTop = '';
  trace.stages.forEach((stage, index) => {
    lines.push(`  ${index + 1}. ${stage.stage} · ${stage.name}  ${describeCounts(stage)}  ${stage.ms} ms`);
    for (const query of stage.queries ?? []) lines.push(`       query: ${JSON.stringify(query)}`);
    const scored = stage.outputIds.slice(0, maxScores).map((id) => `${name(id)}=${formatScore(stage.scores[id])}`);
    const top = `${scored.join('  ')}${stage.outputIds.length > maxScores ? '  …' : ''}`;
    if (scored.length > 0 && top !== previousTop) lines.push(`       top: ${top}`);
    if (scored.length > 0) previousTop = top;
    if (stage.stage === 'generate') {
      const cited = citedLabels(stage).map((label) => `[${label}] ${stage.inputIds[label - 1] === undefined ? '?' : name(stage.inputIds[label - 1])}`);
      lines.push(`       cited: ${cited.length > 0 ? cited.join('  ') : 'nothing'}`);
    }
    for (const dropped of stage.dropped.slice(0, maxDropped)) lines.push(`       dropped ${name(dropped.id)}: ${describeDrop(dropped, name)}`);
    if (stage.dropped.length > maxDropped) lines.push(`       … and ${stage.dropped.length - maxDropped} more dropped`);
    for (const warning of stage.warnings) lines.push(`       warning: ${warning}`);
  });
  if (trace.usage !== undefined && isMetered(trace.usage)) lines.push(formatUsage(trace.usage));
  return lines.join('\n');
}

/**
 * A run's usage, one line per kind of call, provider and model, in the services' own counts; calls whose service
 * reported nothing are said to be unknown, and the cost says the price table's currency and date, or is absent.
 */
export function formatUsage(usage: RunUsage): string {
  const lines = [`  usage: ${summarizeUsage(usage)}`];
  for (const entry of usage.entries) {
    const cost = entry.cost === undefined ? '' : `  cost ${formatCost(entry.cost)} ${usage.currency ?? ''}`.trimEnd();
    lines.push(`       ${entry.kind} · ${entry.model === undefined ? entry.provider : `${entry.provider}/${entry.model}`}  ${describeEntry(entry)}${cost}`);
  }
  return lines.join('\n');
}

/** A service metered a call, or failed to say what it metered: a run with local models only has nothing to show. */
export function isMetered(usage: RunUsage): boolean {
  return usage.entries.some(
    (entry) => entry.unknownCalls > 0 || entry.inputTokens !== undefined || entry.outputTokens !== undefined || entry.searchUnits !== undefined,
  );
}

/** The usage in one line: calls, tokens, search units, unknown calls, and the cost with its table's date. */
export function summarizeUsage(usage: RunUsage): string {
  const parts = [`${usage.calls} call${usage.calls === 1 ? '' : 's'}`];
  const sum = (field: 'inputTokens' | 'outputTokens' | 'searchUnits') =>
    usage.entries.some((entry) => entry[field] !== undefined) ? usage.entries.reduce((total, entry) => total + (entry[field] ?? 0), 0) : undefined;
  const input = sum('inputTokens');
  const output = sum('outputTokens');
  const searchUnits = sum('searchUnits');
  if (input !== undefined) parts.push(`${input} input tokens`);
  if (output !== undefined) parts.push(`${output} output tokens`);
  if (searchUnits !== undefined) parts.push(`${searchUnits} search unit${searchUnits === 1 ? '' : 's'}`);
  if (usage.unknownCalls > 0) parts.push(`${usage.unknownCalls} with usage unknown (the service reported none)`);
  if (usage.pricesAsOf !== undefined) {
    const cost = usage.cost === undefined ? 'cost unknown' : `cost ${formatCost(usage.cost)} ${usage.currency}`;
    const unpriced = usage.unpriced === undefined ? '' : `, not counting ${usage.unpriced.join(', ')} (no price)`;
    parts.push(`${cost} at prices of ${usage.pricesAsOf}${unpriced}`);
  }
  return parts.join(', ');
}

function describeEntry(entry: UsageEntry): string {
  const parts = [`${entry.calls} call${entry.calls === 1 ? '' : 's'}`];
  if (entry.inputTokens !== undefined) parts.push(`${entry.inputTokens} in`);
  if (entry.outputTokens !== undefined) parts.push(`${entry.outputTokens} out`);
  if (entry.searchUnits !== undefined) parts.push(`${entry.searchUnits} search unit${entry.searchUnits === 1 ? '' : 's'}`);
  if (entry.unknownCalls > 0) parts.push(entry.unknownCalls === entry.calls ? 'usage unknown' : `${entry.unknownCalls} unknown`);
  return parts.join(', ');
}

/** A cost to six significant digits: a single call costs fractions of a cent. */
function formatCost(cost: number): string {
  return cost === 0 ? '0' : Number(cost.toPrecision(6)).toString();
}

function describeCounts(stage: StageRecord): string {
  if (stage.stage === 'pre-process' || stage.stage === 'embed') return `${stage.queries?.length ?? 0} quer${stage.queries?.length === 1 ? 'y' : 'ies'}`;
  if (stage.stage === 'search') return `→ ${stage.outputIds.length} found`;
  if (stage.stage === 'generate') return `${stage.inputIds.length} passage${stage.inputIds.length === 1 ? '' : 's'} → ${citedLabels(stage).length} cited`;
  return `${stage.inputIds.length} → ${stage.outputIds.length}${stage.dropped.length ? ` (${stage.dropped.length} dropped)` : ''}`;
}

function citedLabels(stage: StageRecord): number[] {
  const cited = stage.detail?.cited;
  return Array.isArray(cited) ? cited.filter((label): label is number => Number.isInteger(label)) : [];
}

/** Why a document was dropped, with the document it was dropped in favour of named: `… (kept: docs/a.md#2)`. */
export function describeDrop(dropped: DroppedDocument, name: (id: string) => string): string {
  return dropped.keptId === undefined ? dropped.reason : `${dropped.reason} (kept: ${name(dropped.keptId)})`;
}

/**
 * How a printout names a document: `source#chunk` from a trace's `sources`, with the short id added where two
 * documents share one; the short id alone for a document the map does not know.
 */
export function documentNamer(sources: Record<string, string> = {}): (id: string) => string {
  const idsBySource = new Map<string, number>();
  for (const source of Object.values(sources)) idsBySource.set(source, (idsBySource.get(source) ?? 0) + 1);
  return (id) => {
    const source = Object.hasOwn(sources, id) ? sources[id] : undefined;
    if (source === undefined) return shortId(id);
    return (idsBySource.get(source) ?? 0) > 1 ? `${source} (${shortId(id)})` : source;
  };
}

function shortId(id: string): string {
  return id.length > 12 ? id.slice(0, 12) : id;
}

function formatScore(score: number | undefined): string {
  return score === undefined ? '?' : score.toFixed(4);
}

/**
 * The packet as `--explain` shows it: each section with its trust level and tokens, then what was left out and why.
 * Documents are named by `name` (a `documentNamer` of the run's trace), or by short id and source name without it.
 */
export function formatPacket(packet: ContextPacket, name?: (id: string) => string): string {
  const { maxTokens, reservedForOutput, used } = packet.budget;
  const budget = `${used} of ${maxTokens - reservedForOutput} tokens (${maxTokens}, ${reservedForOutput} kept for the answer; ${packet.tokenizer})`;
  const lines = [`Context packet ${packet.packetId}  ${budget}  policy ${packet.policyVersion}`];
  packet.sections.forEach((section, index) => {
    const refs = section.sourceRefs.length > 0 ? `  refs ${section.sourceRefs.map(name ?? shortId).join(',')}` : '';
    const fresh = section.freshness?.updatedAt ? `  updated ${section.freshness.updatedAt.slice(0, 10)}` : '';
    const pinned = section.pinned ? '  pinned' : '';
    lines.push(`  ${index + 1}. ${section.kind} · ${section.title}  [${section.trustLevel}]  ${section.tokens} tokens${pinned}${refs}${fresh}`);
  });
  if (packet.omitted.length > 0) lines.push('  omitted:');
  for (const omitted of packet.omitted) {
    const label = name ? name(omitted.ref) : `${shortId(omitted.ref)}${omitted.sourceName ? ` (${omitted.sourceName})` : ''}`;
    lines.push(`    ${label}: ${omitted.reason}${omitted.detail ? ` — ${omitted.detail}` : ''}`);
  }
  for (const degradation of packet.degradations) lines.push(`  degraded: ${degradation.kind} — ${degradation.detail}`);
  return lines.join('\n');
}
