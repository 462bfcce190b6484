#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AxonError } from '../../src/errors.ts';
import { didYouMean } from '../../src/runtime/closest-name.ts';
import { UsageError, type CommandIO } from './io.ts';

const HELP = `axon — retrieval-augmented generation pipelines

Usage:
  axon ingest <paths…>        Load, split, embed and store files and folders (.txt, .md, …)
  axon ask "<question>"       Answer from the stored documents, with citations
  axon chat                   Talk to the stored documents: each question follows the ones before
                              (answers stream; /sources, /trace, /new; Ctrl-C cancels an answer, Ctrl-D leaves)
  axon conversations          List the kept conversations (show <id> prints one, delete <id> removes it)
  axon trace <run-id>         Print the stored trace of an earlier ask (a unique prefix is enough;
                              --last for the latest, --diff <a> <b> to compare two runs)
  axon serve                  Ask in a browser and see each stage's kept and dropped documents
                              (--port N, default 7777; --host, default 127.0.0.1)
  axon eval <beir-folder>     Measure retrieval quality on a BEIR benchmark (nDCG@10, Recall@10/100, MRR@10, MAP)
  axon store verify <dir>     Check every file of a file store against its manifest, documents included
                              (reads only; exit code 1 when a file is damaged)
  axon store repair <dir>     Rebuild a file store's lost or damaged manifest from its segments (deletes nothing;
                              --dry-run reports what it would do and writes nothing)
  axon --help | --version

Options:
  --store DIR       Where the embedded file store lives (default .axon)
  --config FILE     Pipeline configuration (default: axon.config.json when present)
  --top-k N         Documents fetched per search (ask, chat; default 50); with --agentic, also the length
                    of the run's list: past the ranked results, the question's own search goes on
  --filter JSON     Metadata filter (ask, chat), e.g. '{"sourceName":{"$contains":"guide"}}'
  --ef N            Candidates of an approximate search, for a store with an ANN index (ask, chat)
  --exact           Scan every vector even where the store would use its ANN index (ask, chat)
  --trace           Print every pipeline stage: counts, scores, what was dropped and why (ask)
  --explain         Print the context packet: sections, trust levels, tokens, omitted refs and why (ask)
  --tenant T        The caller's tenant: only its documents and shared ones are eligible (ask, chat)
  --role R          A role of the caller; repeat or comma-separate for several (ask, chat)
  --now DATE        The time freshness is judged at, ISO 8601 (ask; default now)
  --max-tokens N    The context packet's token budget (ask; default 8000)
  --context FILE    JSON of extra packet sections and budget: policies, goal, toolResults, memories (ask)
  --conversation ID Continue conversation ID, kept in the store folder (ask, chat): a follow-up is searched
                    rewritten to stand alone, and the turn is recorded
  --json [FILE]     Machine-readable output on stdout; eval also takes a FILE to write its figures to
  --prune           Remove stored files that no longer exist on disk (ingest)
  --include GLOB    Ingest only files matching GLOB (repeatable; a GLOB without / matches the file name);
                    matched files no loader handles, such as README or LICENSE, are read as text (ingest)
  --embedding-cache DIR
                    Keep document vectors in DIR and reuse them for any store (default .axon-cache/embeddings
                    beside the store's folder)
  --no-embedding-cache
                    Embed every chunk with the provider, reading and writing no cache
  --mode MODE       Search mode for ask (vector, keyword or hybrid), or a list to compare for eval,
                    e.g. vector,keyword,hybrid (default: the configured one)
  --pre-processor LIST
                    Query transformations to compare against none (eval; needs a chat model):
                    decomposition, rewriting, hyde, multi-query
  --limit N         Evaluate only the first N judged queries (eval)
  --split NAME      Which qrels/<NAME>.tsv judges the queries (eval; default test)
  --agentic         ask: plan sub-queries, retrieve in rounds, answer with span citations (--trace shows
                    the events). eval: also run the agentic retriever and report All@10 (every relevant
                    document in the top 10), sub-queries and searches per question, with the settings
                    ask --agentic uses (10 results a search, 20 kept). chat: answer each question with
                    the agentic retriever
  --agentic-per-search N, --agentic-kept N
                    eval: run the agentic retriever with other settings (reported beside the figures)
  --answers         eval: also answer every query, with the index as is and with its judged-relevant
                    documents left out, and report the shares answered and the gold answer found
  --port N          serve: the port (default 7777; 0 picks a free one)
  --host HOST       serve: the interface (default 127.0.0.1; another needs --allow-remote)
  --allow-remote    serve: listen on a non-loopback interface on purpose (prints a warning)
  --workers N       serve: answer questions in N worker threads, each with its own reader of the store
                    (default 2 on a machine with 2 cores or more; 0 answers in the server's thread)
  --dry-run         store repair: check the segments and report, write nothing

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
  explain: { type: 'boolean' },
  tenant: { type: 'string' },
  role: { type: 'string', multiple: true },
  now: { type: 'string' },
  'max-tokens': { type: 'string' },
  context: { type: 'string' },
  conversation: { type: 'string' },
  last: { type: 'boolean' },
  diff: { type: 'boolean' },
  json: { type: 'boolean' },
  prune: { type: 'boolean' },
  include: { type: 'string', multiple: true },
  mode: { type: 'string' },
  'pre-processor': { type: 'string' },
  limit: { type: 'string' },
  split: { type: 'string' },
  agentic: { type: 'boolean' },
  answers: { type: 'boolean' },
  'agentic-per-search': { type: 'string' },
  'agentic-kept': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  workers: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'embedding-cache': { type: 'string' },
  'no-embedding-cache': { type: 'boolean' },
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
    // Each command is loaded when it runs, so `axon --version` and `--help` load none of the pipeline.
    switch (command) {
      case 'ingest':
        return await (await import('./commands/ingest.ts')).runIngest(rest, values, io);
      case 'ask':
        return await (await import('./commands/ask.ts')).runAsk(rest, values, io);
      case 'trace':
        return await (await import('./commands/trace.ts')).runTrace(rest, values, io);
      case 'chat':
        return await (await import('./commands/chat.ts')).runChat(rest, values, io);
      case 'conversations':
        return await (await import('./commands/conversations.ts')).runConversations(rest, values, io);
      case 'serve':
        return await (await import('./commands/serve.ts')).runServe(rest, values, io);
      case 'store':
        return await (await import('./commands/store.ts')).runStore(rest, values, io);
      case 'eval': {
        const { runEval, splitJsonTarget } = await import('./commands/eval.ts');
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
    throw new UsageError(`${describeParseError(error as Error & { code?: string }, argv)} Run \`axon --help\` for the options.`);
  }
}

/** Flags whose value is a positive whole number. */
const NUMBER_FLAGS = new Set(['top-k', 'ef', 'limit', 'port']);

/**
 * One line naming the fix, in place of `parseArgs`'s several (which end in `'--top-k=-XYZ'..`). Only the
 * option's name is taken from its message (the quoted part, stable across Node versions); the rest is ours.
 */
export function describeParseError(error: Error & { code?: string }, argv: string[]): string {
  const flag = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1];
  const name = flag?.replace(/^-+/, '');
  if (flag === undefined || name === undefined) return `${error.message.split('\n')[0].replace(/\.+$/, '')}.`;
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `Unknown option ${flag}${didYouMean(name, Object.keys(OPTIONS)).replace(/"([^"]+)"/, '"--$1"')}.`;
  }
  const option = OPTIONS[name as keyof typeof OPTIONS];
  if (option?.type === 'boolean') return `--${name} is a switch and takes no value: write --${name} alone.`;
  const position = argv.indexOf(flag);
  const next = position === -1 ? undefined : argv[position + 1];
  if (NUMBER_FLAGS.has(name))
    return next !== undefined && /^-\d/.test(next)
      ? `--${name} takes a positive whole number, got "${next}".`
      : `--${name} needs a positive whole number: --${name} N.`;
  if (next === undefined || position === -1) return `--${name} needs a value: --${name} VALUE.`;
  return `--${name} needs a value, but is followed by "${next}"; write --${name}=${next} if that is the value.`;
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

// Run directly (`tsx app/cli/main.ts`, i.e. `npm run axon`); the installed bin (bin/axon.js) calls main() itself.
// No top-level await, so the module also loads where Node requires ES modules synchronously.
if (process.argv[1] !== undefined && import.meta.filename === realpathSync(process.argv[1])) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
