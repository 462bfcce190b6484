import { existsSync } from 'node:fs';
import {
  diffTraces,
  isAgenticTrace,
  JsonlTraceStore,
  type StoredAgenticTrace,
  type StoredRun,
  type StoredTrace,
  type TraceDifference,
} from '../../../src/context/trace-store.ts';
import { formatAgenticEvent } from '../agentic-format.ts';
import { formatCitation } from '../../../src/context/evidence.ts';
import { documentNamer, formatPacket, formatTrace } from '../format.ts';
import { describeMissingStore, loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/**
 * `axon trace <run-id>` (a unique prefix is enough), `axon trace --last`, `axon trace --diff <a> <b>`: stored runs,
 * pipeline runs (`axon ask`) and agentic ones (`axon ask --agentic`).
 */
export async function runTrace(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  for (const id of positionals) if (!/^[\w-]+$/.test(id)) throw new UsageError(`"${id}" is not a run id; run ids are letters, digits and dashes.`);
  const { dataDirectory } = await loadPipeline(options, io);
  if (!existsSync(dataDirectory)) {
    const missing = (await describeMissingStore(dataDirectory, io.cwd)) ?? `${dataDirectory} does not exist.`;
    throw new UsageError(`${missing} No run is stored there: \`axon ask\` saves each run in its store's folder.`);
  }
  const store = new JsonlTraceStore(dataDirectory);
  if (options.diff) {
    if (positionals.length !== 2) throw new UsageError('trace --diff takes two run ids (or unique prefixes): axon trace --diff <a> <b>.');
    const [a, b] = await Promise.all([store.get(positionals[0]), store.get(positionals[1])]);
    const differences = diffTraces(a, b);
    const sources = { ...runSources(b), ...runSources(a) };
    if (options.json) {
      // The ids stay as they are; `sources` names those of the differences' document lists.
      const named = Object.fromEntries(differences.flatMap(documentIds).flatMap((id) => (Object.hasOwn(sources, id) ? [[id, sources[id]]] : [])));
      io.out(JSON.stringify({ a: a.runId, b: b.runId, differences, sources: named }, null, 2));
      return 0;
    }
    const count = differences.length === 0 ? 'no differences' : `${differences.length} difference${differences.length === 1 ? '' : 's'}`;
    io.out(`Runs ${a.runId} and ${b.runId}: ${count}`);
    const name = documentNamer(sources);
    for (const difference of differences) io.out(formatDifference(difference, name));
    return 0;
  }
  let trace: StoredRun | undefined;
  if (options.last) {
    if (positionals.length !== 0) throw new UsageError('trace --last takes no run id.');
    trace = await store.last();
    if (!trace) throw new UsageError(`No run is stored in ${store.file} yet; run \`axon ask\` first.`);
  } else {
    if (positionals.length !== 1) throw new UsageError('trace takes one run id (a unique prefix is enough), as printed by `axon ask`, or --last.');
    trace = await store.get(positionals[0]);
  }
  if (options.json) {
    io.out(JSON.stringify(trace, null, 2));
    return 0;
  }
  io.out(isAgenticTrace(trace) ? formatStoredAgenticTrace(trace) : formatStoredTrace(trace));
  return 0;
}

function formatCaller(trace: StoredRun): string {
  const caller = [
    trace.caller.tenantId && `tenant ${trace.caller.tenantId}`,
    trace.caller.roles && `roles ${trace.caller.roles.join(',')}`,
    trace.caller.now && `now ${trace.caller.now}`,
  ]
    .filter(Boolean)
    .join(', ');
  return caller || 'none';
}

function formatVersion(trace: StoredRun): string {
  return Object.entries(trace.version)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join('  ');
}

/** A stored pipeline run, its documents named `source#chunk` as `axon ask --trace` names them. */
function formatStoredTrace(trace: StoredTrace): string {
  const sources = storedSources(trace);
  const lines = [
    `Run ${trace.runId}  ${trace.startedAt}  status ${trace.status} (${trace.stopReason})`,
    `  caller: ${formatCaller(trace)}`,
    `  version: ${formatVersion(trace)}`,
    `  citations: ${trace.citations.map((citation) => `[${citation.label}] ${formatCitation(citation)}`).join('  ') || 'none'}`,
    '',
    formatTrace(
      { runId: trace.runId, question: trace.question, startedAt: trace.startedAt, stages: trace.stages, ms: trace.ms, sources, usage: trace.usage },
      { maxScores: 10, maxDropped: 50 },
    ),
    '',
    formatPacket(trace.packet, documentNamer(sources)),
  ];
  return lines.join('\n');
}

/**
 * Where each document of a stored run comes from: the `sources` the trace kept, else (a trace saved before they
 * were kept) the source names of what the searches retrieved and of what the packet left out.
 */
function storedSources(trace: StoredTrace): Record<string, string> {
  if (trace.sources !== undefined) return trace.sources;
  const sources: Record<string, string> = {};
  for (const { id, sourceName } of trace.retrieved) if (sourceName) sources[id] ??= sourceName;
  for (const { ref, sourceName } of trace.packet.omitted) if (sourceName) sources[ref] ??= sourceName;
  return sources;
}

/** Where each document of a stored run comes from, pipeline or agentic, as `source#chunk`. */
function runSources(trace: StoredRun): Record<string, string> {
  if (!isAgenticTrace(trace)) return storedSources(trace);
  return Object.fromEntries(trace.results.map((item) => [item.id, formatCitation({ ...item, label: 0 })]));
}

/** The differences that are lists of document ids (`omitted` holds `id:reason`), compared as lists of documents. */
const DOCUMENT_LISTS = new Set(['retrieved', 'packet.evidence', 'citations', 'results', 'omitted']);
/** How many documents a list difference names before `… and N more`. */
const MAX_NAMED = 10;

function documentIds(difference: TraceDifference): string[] {
  if (!DOCUMENT_LISTS.has(difference.path)) return [];
  const ids = [difference.a, difference.b].flatMap((list) => (Array.isArray(list) ? list.map(String) : []));
  return [...new Set(difference.path === 'omitted' ? ids.map((entry) => entry.slice(0, entry.lastIndexOf(':'))) : ids)];
}

/**
 * One difference as `axon trace --diff` prints it: a list of documents as what only one run has and whether the
 * shared ones moved, each named `source#chunk`; any other value as its JSON in each run.
 */
function formatDifference(difference: TraceDifference, name: (id: string) => string): string {
  const { path, a, b } = difference;
  if (!DOCUMENT_LISTS.has(path) || !Array.isArray(a) || !Array.isArray(b)) return `  ${path}\n    a: ${JSON.stringify(a)}\n    b: ${JSON.stringify(b)}`;
  // An omitted entry is `id:reason`: the document is named, the reason kept.
  const label = (entry: string) => {
    if (path !== 'omitted') return name(entry);
    const at = entry.lastIndexOf(':');
    return `${name(entry.slice(0, at))} (${entry.slice(at + 1)})`;
  };
  const left = a.map(String);
  const right = b.map(String);
  const inRight = new Set(right);
  const inLeft = new Set(left);
  const onlyLeft = left.filter((entry) => !inRight.has(entry));
  const onlyRight = right.filter((entry) => !inLeft.has(entry));
  const sharedLeft = left.filter((entry) => inRight.has(entry));
  const sharedRight = right.filter((entry) => inLeft.has(entry));
  const reordered = sharedLeft.some((entry, index) => sharedRight[index] !== entry);
  const lines = [`  ${path} (${left.length} in a, ${right.length} in b)`];
  const list = (entries: string[]) =>
    `${entries.slice(0, MAX_NAMED).map(label).join(', ')}${entries.length > MAX_NAMED ? `, … and ${entries.length - MAX_NAMED} more` : ''}`;
  if (onlyLeft.length > 0) lines.push(`    only in a: ${list(onlyLeft)}`);
  if (onlyRight.length > 0) lines.push(`    only in b: ${list(onlyRight)}`);
  if (reordered) lines.push(`    the ${sharedLeft.length} in both are in another order`);
  return lines.join('\n');
}

/** An agentic run: each step as it ended, the answer's cited spans with their results, how it stopped. */
function formatStoredAgenticTrace(trace: StoredAgenticTrace): string {
  const retrievers = trace.retrievers.map((retriever) => `${retriever.name}${retriever.retrieve ? ` ${JSON.stringify(retriever.retrieve)}` : ''}`);
  const lines = [
    `Agentic run ${trace.runId}  ${trace.startedAt}  status ${trace.status} (${trace.stopReason})`,
    `  caller: ${formatCaller(trace)}`,
    `  version: ${formatVersion(trace) || 'none recorded'}`,
    `  retrievers: ${retrievers.join('  ')}`,
    '',
    ...trace.steps.map((step) => formatAgenticEvent({ type: 'trace', ...step })),
    '',
    trace.answer.trim() || '(no answer)',
  ];
  if (trace.citations.length > 0) lines.push('', 'Citations:');
  trace.citations.forEach((citation, index) => {
    const sources = citation.references.map((reference) => {
      const item = trace.results[reference.resultIndex];
      return item
        ? `result ${reference.resultIndex + 1}: ${item.sourceName || item.sourceType}${item.chunkIndex === undefined ? '' : `#${item.chunkIndex}`}`
        : '?';
    });
    lines.push(`  ${index + 1}. [${citation.startIndex}, ${citation.endIndex}) ${JSON.stringify(trace.answer.slice(citation.startIndex, citation.endIndex))}`);
    lines.push(`     ${sources.join('; ')}`);
  });
  lines.push(
    '',
    `Stopped: ${trace.stopReason.replace(/_/g, ' ')} after ${trace.iterations} round(s), ${trace.subQueries} sub-quer${trace.subQueries === 1 ? 'y' : 'ies'}, ${trace.searches} search(es), ${trace.results.length} result(s) (${trace.planner} planner, ${trace.ms} ms)`,
  );
  return lines.join('\n');
}
