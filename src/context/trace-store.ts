import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Citation } from '../document.ts';
import { AxonError } from '../errors.ts';
import type { Filter } from '../filter/types.ts';
import type { RunTrace } from '../pipeline/trace.ts';
import type { ContractStatus, EvidenceConflict } from './contract.ts';
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
  ms: number;
}

/** Where run traces are kept. */
export interface TraceStore {
  save(trace: StoredTrace): Promise<void>;
  /** The trace whose run id starts with `prefix`; `NOT_FOUND` when none does, `INVALID_INPUT` when several do. */
  get(prefix: string): Promise<StoredTrace>;
  /** The most recently saved trace, if any. */
  last(): Promise<StoredTrace | undefined>;
  /** Every stored trace, newest first (optional: `axon serve` lists past runs with it where a store has it). */
  list?(): Promise<StoredTrace[]>;
}

/** The default trace store: one JSON line per run in `<directory>/traces.jsonl`. */
export class JsonlTraceStore implements TraceStore {
  readonly file: string;

  constructor(directory: string) {
    this.file = join(directory, 'traces.jsonl');
  }

  async save(trace: StoredTrace): Promise<void> {
    await mkdir(join(this.file, '..'), { recursive: true });
    // One appendFile call per line: a crash leaves at most a torn last line, which reading skips.
    await appendFile(this.file, `${JSON.stringify(trace)}\n`);
  }

  async get(prefix: string): Promise<StoredTrace> {
    if (typeof prefix !== 'string' || prefix === '') {
      throw new AxonError('INVALID_INPUT', 'A run id (or a unique prefix of one) is needed.', { component: 'trace-store', details: { argument: 'runId' } });
    }
    const traces = await this.readAll();
    const matches = new Map<string, StoredTrace>();
    for (const trace of traces) if (trace.runId.startsWith(prefix)) matches.set(trace.runId, trace);
    if (matches.size === 0) {
      throw new AxonError('NOT_FOUND', `No trace ${prefix}: no stored run id starts with it in ${this.file}.`, {
        component: 'trace-store',
        fix: 'Use a run id printed by `axon ask`, with the same --store, or `axon trace --last`.',
      });
    }
    if (matches.size > 1) {
      throw new AxonError('INVALID_INPUT', `"${prefix}" is the start of ${matches.size} run ids (${[...matches.keys()].slice(0, 3).join(', ')}…).`, {
        component: 'trace-store',
        fix: 'Give more characters of the run id.',
        details: { argument: 'runId' },
      });
    }
    return [...matches.values()][0];
  }

  async last(): Promise<StoredTrace | undefined> {
    return (await this.readAll()).at(-1);
  }

  async list(): Promise<StoredTrace[]> {
    return (await this.readAll()).reverse();
  }

  private async readAll(): Promise<StoredTrace[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new AxonError('STORE_IO', `Cannot read ${this.file}.`, { component: 'trace-store', cause: error });
    }
    const traces: StoredTrace[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = JSON.parse(line) as StoredTrace;
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
 * the retrieved ids, the packet's evidence, omitted refs and citations. Timings and random ids are ignored.
 */
export function diffTraces(a: StoredTrace, b: StoredTrace): TraceDifference[] {
  const differences: TraceDifference[] = [];
  const compare = (path: string, left: unknown, right: unknown) => {
    if (stableStringify(left) !== stableStringify(right)) differences.push({ path, a: left, b: right });
  };
  const keys = new Set([...Object.keys(a.version ?? {}), ...Object.keys(b.version ?? {})]);
  for (const key of [...keys].sort())
    compare(`version.${key}`, (a.version as unknown as Record<string, unknown>)?.[key], (b.version as unknown as Record<string, unknown>)?.[key]);
  compare('question', a.question, b.question);
  compare('caller', a.caller, b.caller);
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

/** Names of configuration fields whose values are secrets; left out of the configuration hash. */
const SECRET_KEY = /key|token|secret|password|authorization|credential/i;

/** A short, stable hash of a configuration: key order does not matter and secret fields are left out. */
export function hashConfiguration(config: unknown): string {
  return createHash('sha256')
    .update(stableStringify(withoutSecrets(config)))
    .digest('hex')
    .slice(0, 16);
}

/** A short hash of any JSON-like value, stable under key order. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex').slice(0, 16);
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

function stableStringify(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const entries = Object.entries(value)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableStringify(item)}`).join(',')}}`;
}
