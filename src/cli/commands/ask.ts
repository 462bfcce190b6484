import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SEARCH_MODES, type SearchMode } from '../../rag.ts';
import { formatAnswer, formatTrace } from '../format.ts';
import { loadPipeline, parsePositiveInteger, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/** `axon ask "<question>"`: answer with citations; `--trace` adds every stage; the trace is saved for `axon trace`. */
export async function runAsk(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('ask takes exactly one question, in quotes: axon ask "How do I reset my password?"');
  const question = positionals[0];
  const topK = parsePositiveInteger(options['top-k'], '--top-k');
  const filter = parseFilterOption(options.filter);
  const searchMode = parseModeOption(options.mode);
  const ef = parsePositiveInteger(options.ef, '--ef');
  const { rag, dataDirectory } = await loadPipeline(options, io);
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
