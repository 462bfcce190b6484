import { z } from 'zod';
import type { ChatProvider } from '../contracts/chat.ts';
import type { EligibilityPolicy } from '../context/eligibility.ts';
import type { Guardrail } from '../context/outcome.ts';
import type { PipelineVersion, TraceStore } from '../context/trace-store.ts';
import type { OfflinePlannerOptions } from './offline-planner.ts';
import type { RetrieverSpec } from './types.ts';

export const agenticRetrieverOptionsSchema = z
  .object({
    /** 1 to 5 places to search, each `{ name, description, rag or store, filter?, maxResults? }`. */
    retrievers: z.array(z.any()),
    /** Plans, judges sufficiency and answers. Without one, the offline planner plans and the answer is extractive. @default undefined */
    chat: z
      .custom<ChatProvider>((value) => typeof (value as ChatProvider)?.complete === 'function' && typeof (value as ChatProvider)?.stream === 'function', {
        message: 'must be a chat provider (an object with complete() and stream())',
      })
      .optional(),
    /** Planned rounds after the speculative retrieval; a hard cap nothing in the data can raise. @default 3 */
    maxIterations: z.number().int().min(1).max(10).default(3),
    /** Sub-queries searched per round; extra ones are dropped and recorded. @default 5 */
    maxSubQueriesPerIteration: z.number().int().min(1).max(20).default(5),
    /** Sub-queries searched over the whole run; the run stops when it is reached. @default 12 */
    maxSubQueries: z.number().int().min(1).max(50).default(12),
    /** Write an answer with span citations; `false` stops after retrieval. @default true */
    generateResponse: z.boolean().default(true),
    /** Called on the question and on the answer; may block either. @default undefined */
    guardrail: z.custom<Guardrail>((value) => typeof value === 'function', { message: 'must be a function' }).optional(),
    /**
     * Who is asking: becomes a store filter for every retriever before any search, and is checked again on every
     * result. @default undefined (no restriction)
     */
    userContext: z
      .object({
        callerId: z.string().optional(),
        tenantId: z.string().min(1).optional(),
        roles: z.array(z.string().min(1)).optional(),
        now: z.date().optional(),
      })
      .strict()
      .optional(),
    /** The eligibility rules beyond what documents declare (see `EligibilityPolicy`). @default {} */
    eligibilityPolicy: z.custom<EligibilityPolicy>((value) => value !== null && typeof value === 'object').optional(),
    /** Cancels every run of this retriever. @default undefined */
    signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'must be an AbortSignal' }).optional(),
    /** Most results in the final result (and shown to the planner). @default 20 */
    maxResults: z.number().int().min(1).max(100).default(20),
    /**
     * How many results the run returns, when more than `maxResults`: the `maxResults` ranked ones, then every other
     * result of the question's own search in that search's order (it retrieves this many). The list is then never
     * shorter, nor poorer below its ranked head, than a single search for the question; the planner and the answer
     * still see only the ranked results. @default maxResults (the ranked results only)
     */
    topK: z.number().int().min(1).optional(),
    /**
     * How much one planned round counts in the final ranking, relative to the question's own (speculative)
     * search: each of a round's sub-query lists weighs `roundWeight / (sub-queries in the round)` in the
     * reciprocal rank fusion. Chosen on HotpotQA-500 with the offline planner: at 1 the rounds crowd out what the
     * question found (docs/agentic.md). @default 0.25
     */
    roundWeight: z.number().finite().min(0).max(10).default(0.25),
    /** Searches run at once. @default 4 */
    concurrency: z.number().int().min(1).max(16).default(4),
    /** Most characters of results given to the answering model; the best results are kept. @default 12000 */
    contextBudgetCharacters: z.number().int().positive().default(12_000),
    /** System instructions for the answer, before Axon's evidence rules. @default a short helpful-assistant prompt */
    instructions: z.string().default('You are a helpful assistant that answers questions accurately and concisely from the evidence given.'),
    /** Settings of the offline planner (used when there is no `chat`). @default {} */
    offlinePlanner: z
      .object({
        bridgeResults: z.number().int().min(1).max(10).optional(),
        bridgesPerResult: z.number().int().min(1).max(5).optional(),
        judgedResults: z.number().int().min(1).max(50).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export type AgenticRetrieverOptions = Omit<z.input<typeof agenticRetrieverOptionsSchema>, 'retrievers' | 'offlinePlanner'> & {
  retrievers: RetrieverSpec[];
  offlinePlanner?: OfflinePlannerOptions;
};

/** Per-call options of `stream` and `run`. */
export interface AgenticRunOptions {
  /** Cancels this run (besides the retriever's own `signal`). */
  signal?: AbortSignal;
  /** Use this id for the run instead of a random UUID. */
  runId?: string;
  /**
   * Where the run is saved when it ends, before the `result` event (as `RAG.stream` saves its runs): read back by
   * `axon trace` and listed among the past runs of `axon serve`. A cancelled or failed run is not saved.
   * @default none
   */
  traceStore?: TraceStore;
  /** Version facts only the caller knows (the configuration hash), recorded with the saved run. */
  pipelineVersion?: Partial<PipelineVersion>;
  /**
   * Give each pipeline search's trace in its step's closing event: `output.pipeline` (`{ runId, stages, sources }`)
   * for a retrieval, and on each entry of `output.searches` for the speculative retrieval. A saved run keeps them
   * either way. @default false
   */
  searchStages?: boolean;
}

/** The options as parsed: defaults filled in. */
export type ParsedAgenticOptions = z.output<typeof agenticRetrieverOptionsSchema>;
