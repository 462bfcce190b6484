import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgenticFailure, AgenticStatus, AgenticTraceEvent, DroppedCitation, Provenance, SpanCitation } from '../pipeline/agentic-trace.ts';
import type { Citation } from '../document.ts';
import { AxonError } from '../errors.ts';
import type { Filter } from '../filter/types.ts';
import type { RunTrace } from '../pipeline/trace.ts';
import type { RunUsage } from '../pipeline/usage.ts';
import { canonicalJson } from '../runtime/canonical-json.ts';
import type { ContractStatus, EvidenceConflict } from './contract.ts';
import type { CallerContext } from './eligibility.ts';
import type { ContextPacket } from './packet.ts';

/** What a run's answer depends on, so two runs can be compared and a change traced to its cause. */
export interface PipelineVersion {
  /** A hash of the validated configuration, secrets left out (so rotating a key changes nothing). */
  configHash?: string;
  embedding: { name: string; model?: string; dimensions?: number };
  chat?: { name: string; model?: string };
  /** Splitter settings the documents were ingested with, where known. */
  splitter?: Record<string, unknown>;
  /** Each pre-processor's name and prompt version, in order. */
  preProcessors: { name: string; promptVersion?: string }[];
  /** Each post-processor's (reranker's) name and prompt version, in order. */
  postProcessors: { name: string; promptVersion?: string }[];
  /** A hash of the evidence and citation rules the model is given. */
  citationRules: string;
  /** The packet's policy version and tokenizer. */
  policyVersion: string;
  tokenizer: string;
  /** A hash of the eligibility policy (the redactor by name). */
  eligibilityPolicy: string;
  /** `metadata`, or the prompt version of the model-based conflict check. */
  conflictCheck?: string;
}

/** The caller as stored: identifiers and the time only. */
export interface StoredCaller {
  callerId?: string;
  tenantId?: string;
  roles?: string[];
  now?: string;
}

/** A run's caller as a trace stores it (`StoredCaller`): its identifiers and time, nothing else. */
export function storedCaller(caller: CallerContext | undefined): StoredCaller {
  return {
    ...(caller?.callerId ? { callerId: caller.callerId } : {}),
    ...(caller?.tenantId ? { tenantId: caller.tenantId } : {}),
    ...(caller?.roles ? { roles: [...caller.roles] } : {}),
    ...(caller?.now ? { now: caller.now.toISOString() } : {}),
  };
}

/** One run, as the trace store keeps it. Holds ids, scores and the packet the model saw; never keys or unredacted text. */
export interface StoredTrace {
  /** The format of this record. */
  format: 1;
  runId: string;
  startedAt: string;
  question: string;
  caller: StoredCaller;
  filter?: Filter;
  status: ContractStatus;
  stopReason: string;
  /** Every document found by the searches, with its score there, before eligibility and budgeting. */
  retrieved: { id: string; score: number; sourceName?: string }[];
  packet: ContextPacket;
  citations: Citation[];
  evidenceRefs: string[];
  missingEvidence?: string[];
  uncitedSentences?: string[];
  conflicts?: EvidenceConflict[];
  answer: string;
  version: PipelineVersion;
  /** The stage records (ids, scores, drops, timings). */
  stages: RunTrace['stages'];
  /** Where each document the stages name comes from, by id (`sourceName:page#chunk`); absent in traces saved before it was kept. */
  sources?: Record<string, string>;
  /** What the run's provider calls consumed, and cost where prices were given (`Answer.usage`); absent in traces saved before it was kept. */
  usage?: RunUsage;
  ms: number;
}

/**
 * One agentic run (`AgenticRetriever` with a `traceStore`), as the trace store keeps it: every step as it ended,
 * the results with where each was found and the text retrieval returned (after eligibility and redaction), and
 * the answer with its span citations. Never keys, model prompts or unredacted text.
 */
export interface StoredAgenticTrace {
  format: 1;
  kind: 'agentic';
  runId: string;
  startedAt: string;
  question: string;
  caller: StoredCaller;
  status: AgenticStatus;
  stopReason: string;
  answer: string;
  answerMode: 'generated' | 'extractive' | 'none';
  citations: SpanCitation[];
  droppedCitations: DroppedCitation[];
  results: StoredAgenticResult[];
  /** Each step's closing event, in the order they ended; a pipeline search's step holds its stage records (`output.pipeline`). */
  steps: Omit<AgenticTraceEvent, 'type'>[];
  iterations: number;
  subQueries: number;
  searches: number;
  planner: 'model' | 'offline';
  failures: AgenticFailure[];
  blocked?: { stage: 'input' | 'output'; reason: string };
  /** The retrievers searched: name, description, filter and the search settings given to a pipeline. */
  retrievers: { name: string; description: string; kind: 'rag' | 'store'; filter?: Filter; retrieve?: Record<string, unknown> }[];
  /** What is known of the versions: the chat model and what the caller added (the configuration hash). */
  version: Partial<PipelineVersion>;
  /** What the run's provider calls consumed, as the services reported it (`AgenticResult.usage.services`); absent in traces saved before it was kept. */
  usage?: RunUsage;
  ms: number;
}

/** One result of a stored agentic run. */
export interface StoredAgenticResult {
  id: string;
  sourceType: string;
  sourceName: string;
  pageNumber?: number;
  chunkIndex?: number;
  retriever: string;
  score: number;
  expanded: boolean;
  provenance: Provenance[];
  content: string;
}

/** Any stored run: a pipeline run (`StoredTrace`, no `kind`) or an agentic one. */
export type StoredRun = StoredTrace | StoredAgenticTrace;

/** True for a stored agentic run. */
export function isAgenticTrace(trace: StoredRun): trace is StoredAgenticTrace {
  return (trace as StoredAgenticTrace).kind === 'agentic';
}

/** Where run traces are kept: pipeline runs (`RAG.answer`/`stream`) and agentic runs. */
export interface TraceStore {
  save(trace: StoredRun): Promise<void>;
  /** The trace whose run id starts with `prefix`; `NOT_FOUND` when none does, `INVALID_ID` when several do. */
  get(prefix: string): Promise<StoredRun>;
  /** The most recently saved trace, if any. */
  last(): Promise<StoredRun | undefined>;
  /** Every stored trace, newest first (optional: `axon serve` lists past runs with it where a store has it). */
  list?(): Promise<StoredRun[]>;
}

/** Options of `JsonlTraceStore`. */
export interface JsonlTraceStoreOptions {
  /**
   * Permissions `traces.jsonl` is created with (it holds questions, answers and evidence text); the folder, when
   * the store creates it, gets the same with search (x) wherever read is given. The umask still applies; an
   * existing file or folder keeps its own. @default 0o600
   */
  fileMode?: number;
}

/** The default trace store: one JSON line per run in `<directory>/traces.jsonl`, readable by its owner only unless told otherwise. */
export class JsonlTraceStore implements TraceStore {
  readonly file: string;
  private readonly fileMode: number;

  constructor(directory: string, options: JsonlTraceStoreOptions = {}) {
    this.file = join(directory, 'traces.jsonl');
    this.fileMode = options.fileMode ?? 0o600;
    if (!Number.isInteger(this.fileMode) || this.fileMode < 0 || this.fileMode > 0o777 || (this.fileMode & 0o600) !== 0o600) {
      throw new AxonError(
        'INVALID_OPTION',
        `fileMode must be permission bits that let the owner read and write (0o600 at least), got ${String(options.fileMode)}.`,
        {
          component: 'trace-store',
          fix: 'Pass permission bits such as 0o600 (the default: the owner only) or 0o640.',
          details: { option: 'fileMode' },
        },
      );
    }
  }

  async save(trace: StoredRun): Promise<void> {
    const directory = join(this.file, '..');
    await mkdir(join(directory, '..'), { recursive: true });
    await mkdir(directory, { mode: this.fileMode | ((this.fileMode & 0o444) >> 2) }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    // One appendFile call per line: a crash leaves at most a torn last line, which reading skips.
    await appendFile(this.file, `${JSON.stringify(trace)}\n`, { mode: this.fileMode });
  }

  async get(prefix: string): Promise<StoredRun> {
    if (typeof prefix !== 'string' || prefix === '') {
      throw new AxonError('INVALID_ID', 'A run id (or a unique prefix of one) is needed.', {
        component: 'trace-store',
        fix: 'Pass a run id as `axon ask` prints it; its first characters are enough when no other run starts with them.',
        details: { argument: 'runId' },
      });
    }
    const traces = await this.readAll();
    const matches = new Map<string, StoredRun>();
    for (const trace of traces) if (trace.runId.startsWith(prefix)) matches.set(trace.runId, trace);
    if (matches.size === 0) {
      throw new AxonError('NOT_FOUND', `No trace ${prefix}: no stored run id starts with it in ${this.file}.`, {
        component: 'trace-store',
        fix: 'Use a run id printed by `axon ask`, with the same --store, or `axon trace --last`.',
      });
    }
    if (matches.size > 1) {
      throw new AxonError('INVALID_ID', `"${prefix}" is the start of ${matches.size} run ids (${[...matches.keys()].slice(0, 3).join(', ')}…).`, {
        component: 'trace-store',
        fix: 'Give more characters of the run id.',
        details: { argument: 'runId' },
      });
    }
    return [...matches.values()][0];
  }

  async last(): Promise<StoredRun | undefined> {
    return (await this.readAll()).at(-1);
  }

  async list(): Promise<StoredRun[]> {
    return (await this.readAll()).reverse();
  }

  private async readAll(): Promise<StoredRun[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new AxonError('STORE_IO', `Cannot read ${this.file}.`, {
        component: 'trace-store',
        fix: 'Check that this user may read the file and its folder (permissions, a file replaced by a folder).',
        cause: error,
      });
    }
    const traces: StoredRun[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = JSON.parse(line) as StoredRun;
        if (parsed && typeof parsed.runId === 'string') traces.push(parsed);
      } catch {
        // A torn line from an interrupted write; the others are intact.
      }
    }
    return traces;
  }
}

/** One difference between two traces: a dotted path and the two values. */
export interface TraceDifference {
  path: string;
  a: unknown;
  b: unknown;
}

/**
 * What differs between two runs: the pipeline version field by field, then the question, caller, filter, status,
 * the retrieved ids, the packet's evidence, omitted refs and citations. Timings and random ids are ignored. Two
 * agentic runs compare their sub-queries, result ids and cited results instead of the packet; an agentic run and
 * a pipeline run differ in `kind`, and then only the fields both have are compared.
 */
export function diffTraces(a: StoredRun, b: StoredRun): TraceDifference[] {
  const differences: TraceDifference[] = [];
  const compare = (path: string, left: unknown, right: unknown) => {
    if (storedJson(left) !== storedJson(right)) differences.push({ path, a: left, b: right });
  };
  const keys = new Set([...Object.keys(a.version ?? {}), ...Object.keys(b.version ?? {})]);
  for (const key of [...keys].sort())
    compare(`version.${key}`, (a.version as unknown as Record<string, unknown>)?.[key], (b.version as unknown as Record<string, unknown>)?.[key]);
  compare('kind', isAgenticTrace(a) ? 'agentic' : 'pipeline', isAgenticTrace(b) ? 'agentic' : 'pipeline');
  compare('question', a.question, b.question);
  compare('caller', a.caller, b.caller);
  if (isAgenticTrace(a) || isAgenticTrace(b)) {
    compare('status', a.status, b.status);
    compare('stopReason', a.stopReason, b.stopReason);
    if (isAgenticTrace(a) && isAgenticTrace(b)) diffAgentic(a, b, compare);
    compare('answer', a.answer, b.answer);
    return differences;
  }
  compare('filter', a.filter, b.filter);
  compare('status', a.status, b.status);
  compare('stopReason', a.stopReason, b.stopReason);
  compare(
    'retrieved',
    a.retrieved.map((item) => item.id),
    b.retrieved.map((item) => item.id),
  );
  const evidence = (trace: StoredTrace) =>
    trace.packet.sections.filter((section) => section.kind === 'retrieved_evidence').map((section) => section.sourceRefs[0]);
  compare('packet.evidence', evidence(a), evidence(b));
  compare('packet.budget', a.packet.budget, b.packet.budget);
  compare(
    'omitted',
    a.packet.omitted.map((item) => `${item.ref}:${item.reason}`),
    b.packet.omitted.map((item) => `${item.ref}:${item.reason}`),
  );
  compare(
    'citations',
    a.citations.map((citation) => citation.id),
    b.citations.map((citation) => citation.id),
  );
  compare('answer', a.answer, b.answer);
  return differences;
}

function diffAgentic(a: StoredAgenticTrace, b: StoredAgenticTrace, compare: (path: string, left: unknown, right: unknown) => void): void {
  const retrievers = (trace: StoredAgenticTrace) => trace.retrievers.map(({ name, kind, filter, retrieve }) => ({ name, kind, filter, retrieve }));
  compare('retrievers', retrievers(a), retrievers(b));
  const subQueries = (trace: StoredAgenticTrace) =>
    trace.steps.filter((step) => step.step === 'retrieval').map((step) => `${step.iteration}:${String(step.input.retriever)}:${String(step.input.query)}`);
  compare('subQueries', subQueries(a), subQueries(b));
  compare('iterations', a.iterations, b.iterations);
  compare(
    'results',
    a.results.map((item) => item.id),
    b.results.map((item) => item.id),
  );
  const cited = (trace: StoredAgenticTrace) => [
    ...new Set(trace.citations.flatMap((citation) => citation.references.map((ref) => trace.results[ref.resultIndex]?.id))),
  ];
  compare('citations', cited(a), cited(b));
}

/** Names of configuration fields whose values are secrets; left out of the configuration hash. */
const SECRET_KEY = /key|token|secret|password|authorization|credential/i;

/** A short, stable hash of a configuration: key order does not matter and secret fields are left out. */
export function hashConfiguration(config: unknown): string {
  return createHash('sha256')
    .update(storedJson(withoutSecrets(config)))
    .digest('hex')
    .slice(0, 16);
}

/** A short hash of any JSON-like value, stable under key order. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(storedJson(value)).digest('hex').slice(0, 16);
}

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !SECRET_KEY.test(key))
      .map(([key, item]) => [key, withoutSecrets(item)]),
  );
}

/** Canonical JSON as the stored hashes were computed: `undefined` written out, so those hashes stay valid. */
function storedJson(value: unknown): string {
  return canonicalJson(value, { absent: 'undefined' });
}
