#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AxonError } from '../errors.ts';
import { runAsk } from './commands/ask.ts';
import { runEval, splitJsonTarget } from './commands/eval.ts';
import { runIngest } from './commands/ingest.ts';
import { runTrace } from './commands/trace.ts';
import { UsageError, type CommandIO } from './io.ts';

const HELP = `axon — retrieval-augmented generation pipelines

Usage:
  axon ingest <paths…>        Load, split, embed and store files and folders (.txt, .md, …)
  axon ask "<question>"       Answer from the stored documents, with citations
  axon trace <run-id>         Print the stored trace of an earlier ask
  axon eval <beir-folder>     Measure retrieval quality on a BEIR benchmark (nDCG@10, Recall@10/100, MRR@10, MAP)
  axon --help | --version

Options:
  --store DIR       Where the embedded file store lives (default .axon)
  --config FILE     Pipeline configuration (default: axon.config.json when present)
  --top-k N         Documents fetched per search (ask; default 50)
  --filter JSON     Metadata filter (ask), e.g. '{"sourceName":{"$contains":"guide"}}'
  --ef N            Candidates of an approximate search, for a store with an ANN index (ask)
  --exact           Scan every vector even where the store would use its ANN index (ask)
  --trace           Print every pipeline stage: counts, scores, what was dropped and why (ask)
  --json            Machine-readable output on stdout
  --prune           Remove stored files that no longer exist on disk (ingest)
  --mode MODE       Search mode for ask (vector, keyword or hybrid), or a list to compare for eval,
                    e.g. vector,keyword,hybrid (default: the configured one)
  --pre-processor LIST
                    Query transformations to compare against none (eval; needs a chat model):
                    decomposition, rewriting, hyde, multi-query
  --limit N         Evaluate only the first N judged queries (eval)
  --split NAME      Which qrels/<NAME>.tsv judges the queries (eval; default test)
  --agentic         ask: plan sub-queries, retrieve in rounds, answer with span citations (--trace shows
                    the events). eval: also run the agentic retriever and report All@10 (every relevant
                    document in the top 10), sub-queries and searches per question
  --json [FILE]     With eval, the figures as JSON on stdout, or in FILE

With no configuration Axon runs fully offline: the local hashing embedder, the file store under .axon/,
and extractive answers (quoted sentences) since no chat model is configured.`;

const OPTIONS = {
  store: { type: 'string' },
  config: { type: 'string' },
  'top-k': { type: 'string' },
  filter: { type: 'string' },
  ef: { type: 'string' },
  exact: { type: 'boolean' },
  trace: { type: 'boolean' },
  json: { type: 'boolean' },
  prune: { type: 'boolean' },
  mode: { type: 'string' },
  'pre-processor': { type: 'string' },
  limit: { type: 'string' },
  split: { type: 'string' },
  agentic: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} satisfies ParseArgsConfig['options'];

/** Run the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: string[], io: CommandIO = processIO()): Promise<number> {
  try {
    const { values, positionals, tokens } = parseArguments(argv);
    if (values.version) {
      io.out('axon 0.1.0');
      return 0;
    }
    const [command, ...rest] = positionals;
    if (values.help || command === undefined || command === 'help') {
      io.out(HELP);
      return 0;
    }
    switch (command) {
      case 'ingest':
        return await runIngest(rest, values, io);
      case 'ask':
        return await runAsk(rest, values, io);
      case 'trace':
        return await runTrace(rest, values, io);
      case 'eval': {
        // `--json FILE` for eval: the positional right after --json is the file, not a folder.
        const { json, positionals: folders } = splitJsonTarget(tokens, positionals);
        return await runEval(folders.slice(1), values, io, json);
      }
      default:
        throw new UsageError(`Unknown command "${command}". Run \`axon --help\` for the commands.`);
    }
  } catch (error) {
    return reportError(error, io);
  }
}

function parseArguments(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run \`axon --help\` for the options.`);
  }
}

function reportError(error: unknown, io: CommandIO): number {
  if (error instanceof UsageError) {
    io.err(`axon: ${error.message}`);
    return 2;
  }
  if (AxonError.isInstance(error)) {
    io.err(`axon: ${error.message.replace(/^\[axon\] /, '')}`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.err(`axon: unexpected error: ${message}. This is a bug in Axon; please report it with the command you ran.`);
  if (process.env.AXON_DEBUG && error instanceof Error) io.err(error.stack ?? '');
  return 70;
}

function processIO(): CommandIO {
  return {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    errorStream: process.stderr,
    cwd: process.cwd(),
  };
}

const isEntryPoint = process.argv[1] !== undefined && import.meta.filename === (await import('node:fs')).realpathSync(process.argv[1]);
if (isEntryPoint) {
  process.exitCode = await main(process.argv.slice(2));
}
