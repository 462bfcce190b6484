import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgenticRetriever } from '../../agentic/agentic-retriever.ts';
import type { AgenticResult } from '../../agentic/types.ts';
import { SEARCH_MODES, type SearchMode } from '../../rag.ts';
import { formatAgenticEvent, formatAgenticResult } from '../agentic-format.ts';
import { formatAnswer, formatTrace } from '../format.ts';
import { loadPipeline, parsePositiveInteger, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/** `axon ask "<question>"`: answer with citations; `--trace` adds every stage; the trace is saved for `axon trace`. */
export async function runAsk(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('ask takes exactly one question, in quotes: axon ask "How do I reset my password?"');
  const question = positionals[0];
  const topK = options['top-k'] === undefined ? undefined : Number(options['top-k']);
  const filter = parseFilterOption(options.filter);
  const searchMode = parseModeOption(options.mode);
  const ef = parsePositiveInteger(options.ef, '--ef');
  const { rag, dataDirectory } = await loadPipeline(options, io);
  if (options.agentic) return runAgenticAsk(question, rag, filter, options, io);
  const answer = await rag.answer(question, { topK, filter, searchMode, ef, exact: options.exact });
  await rag.close();
  await saveTrace(dataDirectory, answer.trace);
  if (options.json) {
    io.out(JSON.stringify({ status: answer.status, mode: answer.mode, text: answer.text, citations: answer.citations, documents: answer.documents.map(({ embedding: _embedding, ...rest }) => rest), trace: answer.trace }, null, 2));
    return 0;
  }
  io.out(formatAnswer(answer));
  if (options.trace) io.out(`\n${formatTrace(answer.trace)}`);
  else io.err(`(run id ${answer.trace.runId}; \`axon trace ${answer.trace.runId}\` or --trace shows the pipeline)`);
  return 0;
}

/**
 * `axon ask --agentic`: the agentic retriever over the configured pipeline (its chat model plans and answers;
 * without one the offline planner plans and the answer is extractive). `--trace` prints each step as it ends.
 */
async function runAgenticAsk(
  question: string,
  rag: Awaited<ReturnType<typeof loadPipeline>>['rag'],
  filter: Record<string, unknown> | undefined,
  options: CommandOptions,
  io: CommandIO,
): Promise<number> {
  const agent = new AgenticRetriever({
    retrievers: [{ name: 'documents', description: 'The indexed documents', rag, ...(filter ? { filter } : {}) }],
    chat: rag.components().chat,
  });
  let result: AgenticResult | undefined;
  try {
    for await (const event of agent.stream(question)) {
      if (event.type === 'trace' && event.status !== 'inProgress' && options.trace && !options.json) io.out(formatAgenticEvent(event));
      if (event.type === 'result') result = event.result;
    }
  } finally {
    await rag.close();
  }
  if (result === undefined) return 1;
  if (options.json) {
    io.out(JSON.stringify(result, null, 2));
    return 0;
  }
  if (options.trace) io.out('');
  io.out(formatAgenticResult(result));
  return result.status === 'blocked' ? 1 : 0;
}

function parseModeOption(text: string | undefined): SearchMode | undefined {
  if (text === undefined) return undefined;
  if (!(SEARCH_MODES as readonly string[]).includes(text)) throw new UsageError(`--mode for ask is one of ${SEARCH_MODES.join(', ')}, got "${text}".`);
  return text as SearchMode;
}

function parseFilterOption(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--filter is not valid JSON (${(error as Error).message}). Example: --filter '{"sourceName":{"$contains":"guide"}}'`);
  }
}

async function saveTrace(directory: string, trace: { runId: string }): Promise<void> {
  const traces = join(directory, 'traces');
  await mkdir(traces, { recursive: true });
  await writeFile(join(traces, `${trace.runId}.json`), `${JSON.stringify(trace, null, 2)}\n`);
}
