import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createRegistry } from '../../config/built-ins.ts';
import { createRag } from '../../config/create-rag.ts';
import { defineComponent } from '../../config/registry.ts';
import type { VectorStore } from '../../../src/contracts/vector-store.ts';
import { beirDocuments, loadBeir, type BeirDataset } from '../../../src/eval/beir.ts';
import type { AnswerFigures } from '../../../src/eval/answers.ts';
import { evaluateRetrieval, type RetrievalEvaluation } from '../../../src/eval/runner.ts';
import { SEARCH_MODES, type RAG, type SearchMode } from '../../../src/rag.ts';
import { chunk } from '../../../src/runtime/concurrency.ts';
import { loadConfiguration, parsePositiveInteger, UsageError, type CommandIO, type CommandOptions, type LoadedConfiguration } from '../io.ts';
import { ASK_AGENTIC_SETTINGS, evaluateAgentic, evaluateAnswers, type AgenticEvalSettings, type AgenticFigures } from './eval-answers.ts';

/** The options `axon eval` reads besides the shared ones. */
export interface EvalCommandOptions extends CommandOptions {
  /** Comma-separated search modes to compare, e.g. `vector,keyword,hybrid`. */
  mode?: string;
  /** Comma-separated query transformations to compare against none: `decomposition`, `rewriting`, `hyde`, `multi-query`, `none`. */
  'pre-processor'?: string;
  /** Evaluate only the first N judged queries. */
  limit?: string;
  /** Which `qrels/<split>.tsv` to judge with (`train` to tune settings without touching `test`). */
  split?: string;
  /** Also run the agentic retriever (offline planner; the model planner too when a chat model is configured). */
  agentic?: boolean;
  /** Also answer every query, with the index as is and without its judged-relevant documents. */
  answers?: boolean;
  /** Agentic runs: results one search contributes. @default 10, as `axon ask --agentic` */
  'agentic-per-search'?: string;
  /** Agentic runs: results kept in the final ranking. @default 20, as `axon ask --agentic` */
  'agentic-kept'?: string;
}

/** Where `--json` sends the figures: stdout, or the file named right after it. */
export type JsonTarget = { kind: 'none' } | { kind: 'stdout' } | { kind: 'file'; path: string };

/** The query transformations `--pre-processor` accepts, with the strategy each runs. */
export const EVAL_PRE_PROCESSORS = {
  none: undefined,
  rewriting: 'REWRITING',
  decomposition: 'DECOMPOSITION',
  hyde: 'HYDE',
  'multi-query': 'MULTI_QUERY',
} as const;

type PreProcessorChoice = keyof typeof EVAL_PRE_PROCESSORS;

/** One evaluated configuration: a pipeline (its pre-processors) in one search mode. */
export interface EvalRun {
  pipeline: string;
  /** The search mode; for an agentic run, the mode of the pipeline its retriever searches through. */
  mode: SearchMode;
  queryCount: number;
  /** With `--agentic`, also `all@10`: the share of queries with every relevant document in the top 10 ("both hops found"). */
  metrics: Record<string, number>;
  /**
   * Agentic runs: the settings they ran with, sub-queries and searches per question, how often each stop reason
   * ended a run, and (model planner) answers scored against `metadata.answers`.
   */
  agentic?: AgenticFigures;
  /**
   * With `--answers`: the share of queries answered (status `answered`), the share still answered when the query's
   * judged-relevant documents are left out of the search, and the share of non-yes/no questions whose answer holds
   * the gold answer as whole words (SQuAD normalisation; where the data has answers).
   */
  answers?: AnswerFigures;
  meanLatencyMs: number;
  medianLatencyMs: number;
  p95LatencyMs: number;
}

/** What `--json` writes. */
export interface EvalReport {
  dataset: string;
  folder: string;
  split: string;
  documents: number;
  queries: number;
  topK: number;
  embeddings: string;
  configuration: string;
  indexMs: number;
  runs: EvalRun[];
  /** Comparisons asked for that could not run, with the reason. */
  unavailable: { pipeline: string; reason: string }[];
  warnings: string[];
}

const DEFAULT_TOP_K = 100;
const INDEX_BATCH = 1000;
const EVAL_STORE = 'eval-temporary-store';
const METRICS: [string, string][] = [
  ['ndcg@10', 'nDCG@10'],
  ['recall@10', 'Recall@10'],
  ['recall@100', 'Recall@100'],
  ['mrr@10', 'MRR@10'],
  ['map', 'MAP'],
];

/**
 * `axon eval <beir-folder>`: index a BEIR corpus (title + text) once into a temporary file store with the
 * configured embeddings, run the configured pipeline for every judged query in each requested search mode
 * (and with each requested query transformation), and print nDCG@10, Recall@10, Recall@100, MRR@10, MAP
 * and the mean latency per query. Rankings are cut at `--top-k` (default 100) in every mode, so the modes
 * are compared on lists of the same length.
 */
export async function runEval(
  positionals: string[],
  options: EvalCommandOptions,
  io: CommandIO,
  json: JsonTarget = { kind: options.json ? 'stdout' : 'none' },
): Promise<number> {
  if (positionals.length !== 1)
    throw new UsageError('eval takes one BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv): axon eval ../shared/eval/scifact');
  for (const option of ['store', 'filter', 'trace', 'prune'] as const) {
    if (options[option] !== undefined) throw new UsageError(`--${option} does not apply to eval, which indexes the corpus into a temporary store.`);
  }
  const topK = parsePositiveInteger(options['top-k'], '--top-k') ?? DEFAULT_TOP_K;
  const limit = parsePositiveInteger(options.limit, '--limit');
  const pipeline: EvalConfiguration = (await loadConfiguration(options, io)) ?? {
    config: {},
    registry: createRegistry(),
    baseDirectory: io.cwd,
    source: 'the embedded default',
  };
  const modes = parseModes(options.mode);
  const agenticSettings: AgenticEvalSettings = {
    perSearch: parsePositiveInteger(options['agentic-per-search'], '--agentic-per-search') ?? ASK_AGENTIC_SETTINGS.perSearch,
    kept: parsePositiveInteger(options['agentic-kept'], '--agentic-kept') ?? ASK_AGENTIC_SETTINGS.kept,
  };
  for (const flag of ['agentic-per-search', 'agentic-kept'] as const) {
    if (options[flag] !== undefined && !options.agentic) throw new UsageError(`--${flag} applies to the agentic run: add --agentic.`);
  }
  for (const [flag, value] of Object.entries(agenticSettings)) {
    if (value > 100) throw new UsageError(`--agentic-${flag === 'perSearch' ? 'per-search' : 'kept'} takes at most 100, got ${value}.`);
  }
  const { variants, unavailable } = parsePreProcessors(options['pre-processor'], pipeline);

  const dataset = await loadBeir(resolve(io.cwd, positionals[0]), { split: options.split ?? 'test' });
  const queries = limit === undefined ? dataset.queries : dataset.queries.slice(0, limit);
  const directory = await mkdtemp(join(tmpdir(), 'axon-eval-'));
  const store = await temporaryFileStore(pipeline, directory, topK);
  try {
    pipeline.registry.register(defineComponent({ kind: 'store', name: EVAL_STORE, options: z.object({}).loose(), create: () => store }), { replace: true });
    const rags = await Promise.all(
      variants.map(async (variant) => ({
        variant,
        rag: await createRag({ ...pipeline.config, store: { type: EVAL_STORE }, preProcessors: variant.preProcessors }, pipeline),
      })),
    );
    const indexed = await indexCorpus(rags[0].rag, dataset, io);

    const runs: EvalRun[] = [];
    const agenticWarnings: string[] = [];
    for (const { variant, rag } of rags) {
      for (const mode of modes) {
        // Without --mode, the pipeline's own default runs; the first result says which mode that is.
        let ranIn: SearchMode | undefined = mode;
        const rankings = new Map<string, readonly string[]>();
        const evaluation = await evaluateRetrieval({
          queries,
          qrels: dataset.qrels,
          ks: [10, 100],
          search: async (text, query) => {
            const result = await rag.retrieve(text, { topK, searchMode: mode });
            ranIn = result.searchMode;
            const ranking = result.documents.slice(0, topK).map((document) => document.id);
            rankings.set(query.id, ranking);
            return ranking;
          },
          onProgress: progressReporter(io, `${variant.label} · ${mode ?? 'configured mode'}`, 'queries'),
        });
        const run = toRun(variant.label, ranIn ?? 'vector', evaluation);
        if (options.agentic) run.metrics['all@10'] = round(allRelevantAt(rankings, dataset, 10), 4);
        if (options.answers) {
          const settings = { topK, searchMode: mode };
          run.answers = await evaluateAnswers(rag, dataset, queries, settings, progressReporter(io, `${variant.label} · answers`, 'queries'));
        }
        runs.push(run);
      }
    }
    if (options.agentic) {
      // The agentic retriever searches through the configured pipeline, in the mode the first run used.
      const mode = runs[0].mode;
      const planners: ('offline' | 'model')[] = rags[0].rag.components().chat === undefined ? ['offline'] : ['offline', 'model'];
      for (const planner of planners) {
        const onProgress = progressReporter(io, `agentic · ${planner} planner`, 'queries');
        const agentic = await evaluateAgentic(
          rags[0].rag,
          dataset,
          queries,
          { mode, planner, settings: agenticSettings, topK, answers: Boolean(options.answers) },
          onProgress,
        );
        const run = toRun(`agentic-${planner}`, mode, agentic.evaluation);
        run.metrics['all@10'] = round(allRelevantAt(agentic.rankings, dataset, 10), 4);
        run.agentic = agentic.agentic;
        if (agentic.answers) run.answers = agentic.answers;
        runs.push(run);
      }
      if (planners.length === 1) {
        agenticWarnings.push(
          `The agentic model planner and its answer exact-match did not run: ${pipeline.source} has no chat model ` +
            '(add a "chat" section and pass --config). Only the offline planner ran.',
        );
      }
    }

    const report: EvalReport = {
      dataset: dataset.name,
      folder: dataset.folder,
      split: dataset.split,
      documents: indexed.documents,
      queries: queries.length,
      topK,
      embeddings: rags[0].rag.components().embeddings.name,
      configuration: pipeline.source,
      indexMs: Math.round(indexed.ms),
      runs,
      unavailable,
      warnings: [...dataset.warnings, ...indexed.warnings, ...agenticWarnings],
    };
    if (json.kind === 'stdout') io.out(JSON.stringify(report, null, 2));
    else io.out(formatReport(report));
    if (json.kind === 'file') await writeFile(resolve(io.cwd, json.path), `${JSON.stringify(report, null, 2)}\n`);
    if (unavailable.length > 0)
      io.err(
        `axon: ${describeUnavailable(
          unavailable.map((missing) => missing.pipeline),
          pipeline.source,
        )}`,
      );
    return unavailable.length > 0 ? 1 : 0;
  } finally {
    await (store as VectorStore & { close?: () => Promise<void> }).close?.();
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Find where `--json` points among parsed tokens: the positional right after `--json` is its file
 * (`--json out.json`); `--json` alone, or followed by another option, means stdout. Returns the positionals
 * that remain.
 */
export function splitJsonTarget(
  tokens: readonly { kind: string; index: number; name?: string; value?: string }[],
  positionals: string[],
): { json: JsonTarget; positionals: string[] } {
  const option = tokens.find((token) => token.kind === 'option' && token.name === 'json');
  if (option === undefined) return { json: { kind: 'none' }, positionals };
  const next = tokens.find((token) => token.index === option.index + 1);
  if (next?.kind !== 'positional' || next.value === undefined) return { json: { kind: 'stdout' }, positionals };
  const position = tokens.filter((token) => token.kind === 'positional' && token.index < next.index).length;
  // The first positional is the command itself (`axon --json eval …`), never a file.
  if (position === 0) return { json: { kind: 'stdout' }, positionals };
  return { json: { kind: 'file', path: next.value }, positionals: positionals.filter((_, index) => index !== position) };
}

// --- Internal helpers ---

interface EvalConfiguration extends LoadedConfiguration {
  config: Record<string, unknown> & { chat?: unknown; preProcessors?: unknown; store?: { type?: unknown; keywordIndex?: unknown } };
}

interface PipelineVariant {
  label: string;
  preProcessors: unknown;
}

function parseModes(text: string | undefined): (SearchMode | undefined)[] {
  if (text === undefined) return [undefined];
  const modes = [
    ...new Set(
      text
        .split(',')
        .map((mode) => mode.trim())
        .filter((mode) => mode !== ''),
    ),
  ];
  const unknown = modes.filter((mode) => !SEARCH_MODES.includes(mode as SearchMode));
  if (modes.length === 0 || unknown.length > 0)
    throw new UsageError(`--mode takes a comma-separated list of ${SEARCH_MODES.join(', ')}${unknown.length > 0 ? `; got "${unknown.join('", "')}"` : ''}.`);
  return modes as SearchMode[];
}

/**
 * The pipelines to compare. Without `--pre-processor`, the configured one. With it, each choice replaces the
 * configured pre-processors, and `none` (no transformation) comes first as the baseline, since a
 * transformation is only worth its cost against it. A transformation needs a chat model: without one it is
 * reported as unavailable rather than run (it would be the baseline under another name).
 */
function parsePreProcessors(text: string | undefined, pipeline: EvalConfiguration): { variants: PipelineVariant[]; unavailable: EvalReport['unavailable'] } {
  if (text === undefined)
    return { variants: [{ label: describePreProcessors(pipeline.config.preProcessors), preProcessors: pipeline.config.preProcessors }], unavailable: [] };
  const choices = [
    ...new Set(
      text
        .split(',')
        .map((choice) => choice.trim().toLowerCase())
        .filter((choice) => choice !== ''),
    ),
  ];
  const unknown = choices.filter((choice) => !(choice in EVAL_PRE_PROCESSORS));
  if (choices.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--pre-processor takes a comma-separated list of ${Object.keys(EVAL_PRE_PROCESSORS).join(', ')}${unknown.length > 0 ? `; got "${unknown.join('", "')}"` : ''}.`,
    );
  }
  const requested = (choices.includes('none') ? choices : ['none', ...choices]) as PreProcessorChoice[];
  const variants: PipelineVariant[] = [];
  const unavailable: EvalReport['unavailable'] = [];
  for (const choice of requested) {
    const strategy = EVAL_PRE_PROCESSORS[choice];
    if (strategy === undefined) variants.push({ label: 'none', preProcessors: [] });
    else if (pipeline.config.chat === undefined) {
      unavailable.push({ pipeline: choice, reason: describeUnavailable([choice], pipeline.source) });
    } else variants.push({ label: choice, preProcessors: [{ type: 'query-transformation', strategy }] });
  }
  return { variants, unavailable };
}

function describeUnavailable(choices: string[], source: string): string {
  const names =
    choices.length === 1 ? `the ${choices[0]} comparison cannot` : `the ${choices.slice(0, -1).join(', ')} and ${choices.at(-1)} comparisons cannot`;
  return `${names} run: query transformation needs a chat model and ${source} has none (add a "chat" section, e.g. an OpenAI key or an OpenAI-compatible baseURL, and pass --config).`;
}

function describePreProcessors(entries: unknown): string {
  if (!Array.isArray(entries) || entries.length === 0) return 'none';
  return entries
    .map((entry: { type?: unknown; strategy?: unknown }) =>
      typeof entry?.strategy === 'string' ? entry.strategy.toLowerCase().replace('_', '-') : String(entry?.type),
    )
    .join('+');
}

/**
 * A file store in `directory`, built through the registry like any configured store. The configured store's
 * keyword index options are kept, so the evaluated index is the one you would run.
 */
async function temporaryFileStore(pipeline: EvalConfiguration, directory: string, topK: number): Promise<VectorStore> {
  const definition = (await pipeline.registry.get('store', 'file'))!;
  const configured = pipeline.config.store;
  const keywordIndex =
    configured && (configured.type === 'file' || configured.type === 'memory') && configured.keywordIndex !== undefined
      ? { keywordIndex: configured.keywordIndex }
      : {};
  const options = definition.options.parse({ directory, topK, ...keywordIndex });
  return definition.create(options, { chat: undefined, embeddings: undefined, store: undefined, baseDirectory: directory });
}

async function indexCorpus(rag: RAG, dataset: BeirDataset, io: CommandIO): Promise<{ documents: number; ms: number; warnings: string[] }> {
  const started = performance.now();
  const { documents, empty } = beirDocuments(dataset);
  const report = progressReporter(io, `indexing ${dataset.name}`, 'documents');
  let done = 0;
  for (const batch of chunk(documents, INDEX_BATCH)) {
    await rag.addDocuments(batch);
    done += batch.length;
    report(done, documents.length);
  }
  const warnings = empty > 0 ? [`${empty} corpus document(s) have no title or text and were not indexed.`] : [];
  return { documents: documents.length, ms: performance.now() - started, warnings };
}

/** Progress on stderr: a line redrawn in place on a terminal, else a line at every tenth. */
function progressReporter(io: CommandIO, label: string, unit: string): (done: number, total: number) => void {
  const interactive = Boolean(io.errorStream.isTTY);
  let lastTenth = -1;
  return (done, total) => {
    const line = `${label}: ${done}/${total} ${unit}`;
    if (interactive) {
      io.errorStream.write(`\r\u001b[2K${line}${done === total ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((10 * done) / Math.max(total, 1));
    if (tenth !== lastTenth || done === total) {
      lastTenth = tenth;
      io.errorStream.write(`${line}\n`);
    }
  };
}

/** Share of the judged queries whose every relevant document is in the first `k` of their ranking. */
function allRelevantAt(rankings: Map<string, readonly string[]>, dataset: BeirDataset, k: number): number {
  let complete = 0;
  for (const [queryId, ranking] of rankings) {
    const judgments = dataset.qrels.get(queryId);
    if (!judgments) continue;
    const relevant = [...judgments].filter(([, grade]) => grade > 0).map(([id]) => id);
    const top = new Set(ranking.slice(0, k));
    if (relevant.length > 0 && relevant.every((id) => top.has(id))) complete++;
  }
  return rankings.size === 0 ? 0 : complete / rankings.size;
}

function toRun(pipeline: string, mode: SearchMode, evaluation: RetrievalEvaluation): EvalRun {
  return {
    pipeline,
    mode,
    queryCount: evaluation.queryCount,
    metrics: Object.fromEntries(METRICS.map(([key]) => [key, round(evaluation.metrics[key], 4)])),
    meanLatencyMs: round(evaluation.meanLatencyMs, 2),
    medianLatencyMs: round(evaluation.medianLatencyMs, 2),
    p95LatencyMs: round(evaluation.p95LatencyMs, 2),
  };
}

function formatReport(report: EvalReport): string {
  const agentic = report.runs.some((run) => run.agentic !== undefined);
  const header = ['pipeline', 'mode', ...METRICS.map(([, title]) => title), ...(agentic ? ['All@10', 'sub-q/q', 'searches/q'] : []), 'ms/query'];
  const rows = report.runs.map((run) => [
    run.pipeline,
    run.mode,
    ...METRICS.map(([key]) => run.metrics[key].toFixed(4)),
    ...(agentic ? [run.metrics['all@10'].toFixed(4), (run.agentic?.subQueriesPerQuery ?? 0).toFixed(2), (run.agentic?.searchesPerQuery ?? 1).toFixed(2)] : []),
    run.meanLatencyMs.toFixed(1),
  ]);
  const notes = report.runs.flatMap((run) => {
    if (run.agentic === undefined) return [];
    const stops = Object.entries(run.agentic.stopReasons)
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    const { answerExactMatch, answerContainsGold, answered, settings } = run.agentic;
    const answers =
      answerExactMatch === undefined
        ? ''
        : `; answer exact match ${answerExactMatch.toFixed(4)}, contains gold ${answerContainsGold!.toFixed(4)} over ${answered} answered`;
    const ran = `${settings.perSearch} results a search, ${settings.kept} kept${isAskSetting(settings) ? ' (axon ask --agentic)' : ''}, then the question's own results to ${report.topK}`;
    return [`${run.pipeline}: ${ran}; stop reasons ${stops}${answers}`];
  });
  return [
    `${report.dataset} (${report.split}): ${report.documents} documents, ${report.queries} queries, top-k ${report.topK}; ${report.embeddings} from ${report.configuration}; indexed in ${(report.indexMs / 1000).toFixed(1)} s`,
    '',
    ...table(header, rows),
    ...(agentic ? ['', 'All@10: share of queries with every relevant document in the top 10 (both hops found).', ...notes] : []),
    ...answersTable(report.runs),
    ...report.warnings.map((warning) => `warning: ${warning}`),
  ].join('\n');
}

/** With `--answers`, a second table: the shares answered with and without the gold documents, and the gold found in the answer. */
function answersTable(runs: EvalRun[]): string[] {
  const answered = runs.filter((run) => run.answers !== undefined);
  if (answered.length === 0) return [];
  const header = ['pipeline', 'mode', 'answered', 'without gold', 'gold in answer'];
  const rows = answered.map((run) => {
    const figures = run.answers!;
    return [run.pipeline, run.mode, figures.answered.toFixed(4), figures.answeredWithoutGold.toFixed(4), figures.goldInAnswer?.toFixed(4) ?? '-'];
  });
  const questions = answered[0].answers!;
  return [
    '',
    ...table(header, rows),
    '',
    `answered: share of the ${questions.questions} queries answered; without gold: the same with each query's judged-relevant documents left out of the search;`,
    questions.goldQuestions > 0
      ? `gold in answer: share of the ${questions.goldQuestions} questions that are not yes/no whose answer holds the gold answer as whole words (SQuAD normalisation, extractive preamble excluded).`
      : 'gold in answer: - (the queries have no gold answers).',
  ];
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}

function isAskSetting(settings: AgenticEvalSettings): boolean {
  return settings.perSearch === ASK_AGENTIC_SETTINGS.perSearch && settings.kept === ASK_AGENTIC_SETTINGS.kept;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
