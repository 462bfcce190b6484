import { diffTraces, isAgenticTrace, JsonlTraceStore, type StoredAgenticTrace, type StoredRun, type StoredTrace } from '../../../src/context/trace-store.ts';
import { formatAgenticEvent } from '../agentic-format.ts';
import { formatPacket, formatTrace } from '../format.ts';
import { loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/**
 * `axon trace <run-id>` (a unique prefix is enough), `axon trace --last`, `axon trace --diff <a> <b>`: stored runs,
 * pipeline runs (`axon ask`) and agentic ones (`axon ask --agentic`).
 */
export async function runTrace(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  for (const id of positionals) if (!/^[\w-]+$/.test(id)) throw new UsageError(`"${id}" is not a run id; run ids are letters, digits and dashes.`);
  const { dataDirectory } = await loadPipeline(options, io);
  const store = new JsonlTraceStore(dataDirectory);
  if (options.diff) {
    if (positionals.length !== 2) throw new UsageError('trace --diff takes two run ids (or unique prefixes): axon trace --diff <a> <b>.');
    const [a, b] = await Promise.all([store.get(positionals[0]), store.get(positionals[1])]);
    const differences = diffTraces(a, b);
    if (options.json) {
      io.out(JSON.stringify({ a: a.runId, b: b.runId, differences }, null, 2));
      return 0;
    }
    const count = differences.length === 0 ? 'no differences' : `${differences.length} difference${differences.length === 1 ? '' : 's'}`;
    io.out(`Runs ${a.runId} and ${b.runId}: ${count}`);
    for (const difference of differences) io.out(`  ${difference.path}\n    a: ${JSON.stringify(difference.a)}\n    b: ${JSON.stringify(difference.b)}`);
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

function formatStoredTrace(trace: StoredTrace): string {
  const lines = [
    `Run ${trace.runId}  ${trace.startedAt}  status ${trace.status} (${trace.stopReason})`,
    `  caller: ${formatCaller(trace)}`,
    `  version: ${formatVersion(trace)}`,
    `  citations: ${trace.citations.map((citation) => `[${citation.label}] ${citation.sourceName}`).join('  ') || 'none'}`,
    '',
    formatTrace(
      { runId: trace.runId, question: trace.question, startedAt: trace.startedAt, stages: trace.stages, ms: trace.ms, usage: trace.usage },
      { maxScores: 10, maxDropped: 50 },
    ),
    '',
    formatPacket(trace.packet),
  ];
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
