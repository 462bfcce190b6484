import { randomUUID } from 'node:crypto';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { RunContext } from '../contracts/run-context.ts';
import { NO_SPAN, telemetryApi } from './telemetry.ts';
import type { Document } from '../document.ts';
import { type PriceTable, type RunUsage, UsageTally } from './usage.ts';
import { type CallAttributes, type CallSpans, RunUsageMeter } from './usage-meter.ts';

/**
 * The kinds of stage a run goes through, in order. `condense` (a follow-up rewritten into a stand-alone
 * question before retrieval) is run only by pipelines that add such a stage.
 */
export type StageKind = 'condense' | 'pre-process' | 'embed' | 'search' | 'fusion' | 'dedupe' | 'post-process' | 'eligibility' | 'context' | 'generate';

/** What one stage received and returned, and why documents left. */
export interface StageRecord {
  stage: StageKind;
  /** The component, e.g. `file-store`, `adaptive-threshold`. */
  name: string;
  /** Search queries this stage worked on (pre-process, embed, search). */
  queries?: string[];
  inputIds: string[];
  outputIds: string[];
  /** Score of each output document after this stage, on this stage's scale. */
  scores: Record<string, number>;
  dropped: DroppedDocument[];
  ms: number;
  warnings: string[];
  /** Stage-specific facts (thresholds computed, the fused lists, …). */
  detail?: Record<string, unknown>;
  /** What the provider calls made in this stage consumed (query embeddings, a reranker, the answer…); absent when it made none. */
  usage?: RunUsage;
}

export interface DroppedDocument {
  id: string;
  reason: string;
  /**
   * The document this one was dropped in favour of (the original of a duplicate, the selected document MMR found
   * it too similar to). Printouts name it by source and chunk from `RunTrace.sources`; the reason does not hold it.
   */
  keptId?: string;
}

/** The whole record of one run, returned with every result and printed by `axon ask --trace`. */
export interface RunTrace {
  runId: string;
  question: string;
  startedAt: string;
  stages: StageRecord[];
  /** Wall time of the whole run so far, in milliseconds. */
  ms: number;
  /** Where each document the stages name comes from, by id: `sourceName:page#chunk`, as citations are printed. */
  sources?: Record<string, string>;
  /** What every provider call of the run consumed so far, summed by kind, provider and model; absent before the first call. */
  usage?: RunUsage;
}

/** The OpenTelemetry tracer name Axon's spans are reported under. */
export const TELEMETRY_TRACER = 'axon-rag';

/**
 * Collects the stage records of one run. Each run is also an OpenTelemetry span (`axon.run`) with one child span
 * per stage (`axon.<stage>`), through `@opentelemetry/api`: no-ops unless the application installs an SDK (the
 * API is loaded by `prepareTelemetry()`, which each run awaits first, only once an SDK has registered).
 * Attributes are the run id, the component and counts (never the question or document text). Each provider call is
 * a client span of the stage that made it, with OpenTelemetry's GenAI attributes (`usage-meter.ts`); the stage and
 * run spans carry the sums as `axon.usage.*`, so a backend that adds up `gen_ai.usage.*` counts each call once.
 */
export class TraceRecorder {
  readonly trace: RunTrace;
  /** @internal What the run's provider calls consumed, summed (each stage's meter adds to it). */
  readonly usage = new UsageTally();
  /** @internal The prices usage is costed by. */
  readonly prices: PriceTable | undefined;
  private readonly started = performance.now();
  private readonly runSpan: Span;
  private readonly spanContext: Context | undefined;
  private readonly openSpans = new Set<Span>();
  private readonly pending = new Set<StageHandle>();
  private finished = false;
  /** The last summary of `usage`, and the tally's version it was made at. */
  private summarised: { version: number; usage: RunUsage } | undefined;

  /**
   * @param options.telemetry `false` reports no span for this run (a search run inside another component's step,
   *   whose trace is not returned). @default true
   * @param options.prices What usage costs (`RunUsage.cost`); without it, usage has no cost.
   */
  constructor(question: string, runId: string = randomUUID(), options: { telemetry?: boolean; prices?: PriceTable } = {}) {
    this.trace = { runId, question, startedAt: new Date().toISOString(), stages: [], ms: 0 };
    this.prices = options.prices;
    const api = options.telemetry === false ? undefined : telemetryApi();
    this.runSpan = api ? api.trace.getTracer(TELEMETRY_TRACER).startSpan('axon.run', { attributes: { 'axon.run_id': runId } }) : NO_SPAN;
    this.spanContext = api ? api.trace.setSpan(api.context.active(), this.runSpan) : undefined;
  }

  /**
   * Open a record; the returned handle gives the stage its `RunContext` and closes the record. An `optional`
   * record may be discarded (`StageHandle.discard`): its span is only started, backdated, once the record is
   * kept or the run fails, so a discarded stage reports nothing.
   */
  begin(
    stage: StageKind,
    name: string,
    input: { documents?: Document[]; queries?: string[] },
    signal: AbortSignal,
    options: { optional?: boolean } = {},
  ): StageHandle {
    this.remember(input.documents);
    const handle = new StageHandle(this, stage, name, input, signal, options.optional === true);
    if (options.optional === true) this.pending.add(handle);
    return handle;
  }

  /** @internal A child span of the run, ended by `endSpan` (or by `fail`); `startTime` backdates it (epoch ms). */
  startSpan(name: string, attributes: Attributes, startTime?: number): Span {
    const api = telemetryApi();
    if (!api || this.spanContext === undefined) return NO_SPAN;
    const tracer = api.trace.getTracer(TELEMETRY_TRACER);
    const span = tracer.startSpan(name, { attributes: { 'axon.run_id': this.trace.runId, ...attributes }, startTime }, this.spanContext);
    this.openSpans.add(span);
    return span;
  }

  /** @internal A client span for one provider call, child of `parent` (a stage's span). */
  startCallSpan(parent: Span, name: string, attributes: Attributes): Span {
    const api = telemetryApi();
    if (!api || parent === NO_SPAN) return NO_SPAN;
    const context = api.trace.setSpan(api.context.active(), parent);
    const span = api.trace
      .getTracer(TELEMETRY_TRACER)
      .startSpan(name, { kind: api.SpanKind.CLIENT, attributes: { 'axon.run_id': this.trace.runId, ...attributes } }, context);
    this.openSpans.add(span);
    return span;
  }

  /** @internal End one span as failed by `error` (a provider call that threw), unless the run's failure ended it. */
  failSpan(span: Span, error: unknown): void {
    if (span === NO_SPAN || !this.openSpans.has(span)) return;
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: telemetryApi()?.SpanStatusCode.ERROR ?? 2, message: error instanceof Error ? error.message : String(error) });
    const code = (error as { code?: unknown } | null)?.code;
    span.setAttribute('error.type', typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error');
    span.end();
    this.openSpans.delete(span);
  }

  /**
   * What the run's provider calls consumed so far, costed by the run's prices. Summed once per change: until another
   * call is counted, every caller (the trace, the result, the answer) gets the same object, to read, not to change.
   */
  usageSummary(): RunUsage {
    const { version } = this.usage;
    if (this.summarised?.version !== version) this.summarised = { version, usage: this.usage.summary(this.prices) };
    return this.summarised.usage;
  }

  /** @internal An optional record was kept or discarded: it no longer waits for a span. */
  settle(handle: StageHandle): void {
    this.pending.delete(handle);
  }

  /** @internal */
  endSpan(span: Span, attributes: Attributes): void {
    // A span the run's failure has ended already (a call still in flight then) is not ended twice.
    if (span !== NO_SPAN && !this.openSpans.has(span)) return;
    span.setAttributes(attributes);
    span.end();
    this.openSpans.delete(span);
  }

  /** @internal Record where documents come from, so a printed trace can name them by source rather than id. */
  remember(documents: readonly Document[] | undefined): void {
    if (!documents) return;
    const sources = (this.trace.sources ??= {});
    for (const document of documents) {
      if (document?.id === undefined || Object.hasOwn(sources, document.id)) continue;
      const page = typeof document.metadata?.pageNumber === 'number' ? `:${document.metadata.pageNumber}` : '';
      const chunk = typeof document.metadata?.chunkIndex === 'number' ? `#${document.metadata.chunkIndex}` : '';
      sources[document.id] = `${document.sourceName || document.sourceType || document.id}${page}${chunk}`;
    }
  }

  /** @internal */
  commit(record: StageRecord): StageRecord {
    this.trace.stages.push(record);
    this.trace.ms = round(performance.now() - this.started);
    if (!this.usage.empty) this.trace.usage = this.usageSummary();
    return record;
  }

  /** End the run's span with its outcome. Later calls do nothing. */
  finish(attributes: Attributes = {}): void {
    if (this.finished) return;
    this.finished = true;
    // Without telemetry the span is a no-op: its attributes are not worth making.
    if (this.runSpan !== NO_SPAN) {
      this.runSpan.setAttributes({
        'axon.stage_count': this.trace.stages.length,
        ...usageSpanAttributes(this.usage.empty ? undefined : this.usageSummary()),
        ...attributes,
      });
    }
    this.runSpan.end();
  }

  /** End every open span, and the run's, as failed by `error`. Later calls do nothing. */
  fail(error: unknown): void {
    if (this.finished) return;
    // An optional stage in progress failed with the run: it is reported after all.
    for (const handle of this.pending) handle.openSpan();
    this.pending.clear();
    for (const span of [...this.openSpans, this.runSpan]) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: telemetryApi()?.SpanStatusCode.ERROR ?? 2, message: error instanceof Error ? error.message : String(error) });
      span.end();
    }
    this.openSpans.clear();
    this.finished = true;
  }
}

/** One stage in progress. */
export class StageHandle {
  readonly context: RunContext;
  private readonly startedAt = performance.now();
  private readonly warnings: string[] = [];
  private readonly dropReasons = new Map<string, { reason: string; keptId?: string }>();
  private readonly inputIds: string[];
  private readonly usage = new UsageTally();
  private span: Span | undefined;

  constructor(
    private readonly recorder: TraceRecorder,
    private readonly stage: StageKind,
    private readonly name: string,
    private readonly input: { documents?: Document[]; queries?: string[] },
    signal: AbortSignal,
    optional = false,
  ) {
    this.inputIds = input.documents?.map((document) => document.id) ?? [];
    if (!optional) this.openSpan(false);
    const { runId, question } = recorder.trace;
    // Made for every stage of every run, so without closures of its own: bound methods and a small class (the
    // built package names each closure it creates, which costs more than the rest of the stage's bookkeeping).
    this.context = {
      runId,
      question,
      signal,
      usage: new RunUsageMeter([this.usage, recorder.usage], new StageCallSpans(recorder, this)),
      warn: this.warnFromStage.bind(this),
      drop: this.dropFromStage.bind(this),
    };
  }

  warn(message: string): void {
    this.warnings.push(message);
  }

  drop(id: string, reason: string, related?: { keptId?: string }): void {
    const keptId = related?.keptId;
    this.dropReasons.set(id, typeof keptId === 'string' && keptId !== '' ? { reason, keptId } : { reason });
  }

  /** `RunContext.warn` of the stage: whatever a stage passes is kept as text. */
  private warnFromStage(message: unknown): void {
    this.warnings.push(String(message));
  }

  /** `RunContext.drop` of the stage. */
  private dropFromStage(id: unknown, reason: unknown, related?: { keptId?: string }): void {
    this.drop(String(id), String(reason), related);
  }

  /** @internal Start this stage's span unless it has one; `late` backdates it to when the stage began. */
  openSpan(late = true): Span {
    this.span ??= this.recorder.startSpan(
      `axon.${this.stage}`,
      {
        'axon.stage': this.stage,
        'axon.component': this.name,
        'axon.input_count': this.inputIds.length,
        ...(this.input.queries ? { 'axon.query_count': this.input.queries.length } : {}),
      },
      // A span opened late starts when the stage began, in epoch milliseconds.
      late ? performance.timeOrigin + this.startedAt : undefined,
    );
    return this.span;
  }

  /** Close an optional stage without a record: it had nothing to report. */
  discard(): void {
    this.recorder.settle(this);
    // A span opened for a provider call of a stage that then kept no record is ended all the same.
    if (this.span !== undefined) this.recorder.endSpan(this.span, {});
  }

  /**
   * Close the stage. Every input document missing from the output is recorded as dropped, with the reason
   * the stage gave or, failing that, `removed by <name>`.
   */
  end(output: { documents?: Document[]; queries?: string[]; detail?: Record<string, unknown> }): StageRecord {
    this.recorder.remember(output.documents);
    const outputIds = output.documents?.map((document) => document.id) ?? [];
    const kept = new Set(outputIds);
    const dropped: DroppedDocument[] = [];
    for (const id of new Set(this.inputIds)) {
      if (!kept.has(id)) dropped.push({ id, ...(this.dropReasons.get(id) ?? { reason: `removed by ${this.name}` }) });
    }
    const scores: Record<string, number> = {};
    for (const document of output.documents ?? []) scores[document.id] = round(document.score, 6);
    const record: StageRecord = {
      stage: this.stage,
      name: this.name,
      inputIds: this.inputIds,
      outputIds,
      scores,
      dropped,
      ms: round(performance.now() - this.startedAt),
      warnings: this.warnings,
    };
    const queries = output.queries ?? this.input.queries;
    if (queries) record.queries = queries;
    if (output.detail) record.detail = output.detail;
    if (!this.usage.empty) record.usage = this.usage.summary(this.recorder.prices);
    this.recorder.settle(this);
    const span = this.openSpan();
    this.recorder.endSpan(
      span,
      span === NO_SPAN
        ? {}
        : {
            'axon.output_count': outputIds.length,
            'axon.dropped_count': dropped.length,
            'axon.warning_count': this.warnings.length,
            ...(queries ? { 'axon.query_count': queries.length } : {}),
            ...usageSpanAttributes(record.usage),
          },
    );
    return this.recorder.commit(record);
  }
}

/** Each provider call of a stage as a client span, child of the stage's span (opened for it if it was not yet). */
class StageCallSpans implements CallSpans {
  constructor(
    private readonly recorder: TraceRecorder,
    private readonly stage: StageHandle,
  ) {}

  start(name: string, attributes: CallAttributes): { end(attributes: CallAttributes): void; fail(error: unknown): void } {
    const span = this.recorder.startCallSpan(this.stage.openSpan(), name, attributes);
    return {
      end: (ended) => this.recorder.endSpan(span, ended),
      fail: (error) => this.recorder.failSpan(span, error),
    };
  }
}

/** A run's or a stage's usage as span attributes of Axon's own (`axon.usage.*`): the GenAI ones are on each call's span. */
function usageSpanAttributes(usage: RunUsage | undefined): Attributes {
  if (usage === undefined) return {};
  const attributes: Attributes = { 'axon.usage.calls': usage.calls, 'axon.usage.unknown_calls': usage.unknownCalls };
  attributes['axon.usage.input_tokens'] = sumOf(usage, 'inputTokens');
  attributes['axon.usage.output_tokens'] = sumOf(usage, 'outputTokens');
  const searchUnits = sumOf(usage, 'searchUnits');
  if (searchUnits > 0) attributes['axon.usage.search_units'] = searchUnits;
  if (usage.cost !== undefined) attributes['axon.usage.cost'] = usage.cost;
  return attributes;
}

function sumOf(usage: RunUsage, field: 'inputTokens' | 'outputTokens' | 'searchUnits'): number {
  let total = 0;
  for (const entry of usage.entries) total += entry[field] ?? 0;
  return total;
}

function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
