import type { RunUsage } from '../pipeline/usage.ts';
import type { ChatProvider } from '../contracts/chat.ts';
import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { JsonValue } from '../document.ts';
import type { Filter } from '../filter/types.ts';
import type { RAG, RetrieveOptions } from '../rag.ts';
import type { AgenticFailure, AgenticStatus, AgenticTraceEvent, DroppedCitation, Provenance, SpanCitation } from '../pipeline/agentic-trace.ts';
import type { StopReason } from '../context/outcome.ts';

export type {
  AgenticFailure,
  AgenticStatus,
  AgenticStep,
  AgenticStepStatus,
  AgenticTraceEvent,
  DroppedCitation,
  Provenance,
  SpanCitation,
} from '../pipeline/agentic-trace.ts';
export type { Guardrail, GuardrailCheck, GuardrailDecision, GuardrailStage, GuardrailVerdict, StopReason } from '../context/outcome.ts';

/** One place the agentic retriever can search: a whole pipeline (`rag`), or a bare store. */
export type RetrieverSpec = RagRetrieverSpec | StoreRetrieverSpec;

interface RetrieverSpecBase {
  /** How the planner names this retriever in a sub-query. Letters, digits, `-` and `_`; unique. */
  name: string;
  /** What this retriever holds, shown to the planner so it can route sub-queries. */
  description: string;
  /** Metadata filter (SPEC §4) applied inside every search of this retriever. */
  filter?: Filter;
  /** Most results one search of this retriever contributes. @default 10 */
  maxResults?: number;
}

/** Searched through the pipeline's own `retrieve`: its pre- and post-processors and search mode apply. */
export interface RagRetrieverSpec extends RetrieverSpecBase {
  rag: RAG;
  /**
   * Search settings given to every `rag.retrieve` of this retriever, with the same meaning as there (`topK` is the
   * documents fetched per search, before post-processing and `maxResults`). @default the pipeline's own
   */
  retrieve?: RagSearchSettings;
}

/** The search settings of `RetrieveOptions` a pipeline retriever passes on to each search. */
export type RagSearchSettings = Pick<RetrieveOptions, 'topK' | 'searchMode' | 'hybridWeights' | 'ef' | 'exact'>;

/**
 * Searched directly: by vector when `embeddings` is given, by BM25 when the store has a keyword index, fused
 * by reciprocal rank fusion when both.
 */
export interface StoreRetrieverSpec extends RetrieverSpecBase {
  store: VectorStore;
  embeddings?: EmbeddingsProvider;
}

/** A piece of the answer text, in order; the pieces concatenate to `result.answer` exactly (markers removed). */
export interface AgenticResponseEvent {
  type: 'response';
  text: string;
}

export interface AgenticResultEvent {
  type: 'result';
  result: AgenticResult;
}

export type AgenticEvent = AgenticTraceEvent | AgenticResponseEvent | AgenticResultEvent;

/** One de-duplicated result: a chunk, or a whole document read back by source. */
export interface AgenticResultItem {
  /** The chunk id, or `source:<sourceType>:<sourceName>` for an expanded document. */
  id: string;
  content: string;
  metadata: Record<string, JsonValue>;
  sourceType: string;
  sourceName: string;
  /** The retriever that first found it. */
  retriever: string;
  /** Its reciprocal-rank-fusion score over every search that found it. */
  score: number;
  /** True for a whole document (its chunks, in order, joined by blank lines). */
  expanded: boolean;
  /** For an expanded document, the ids of its chunks in order. */
  chunkIds?: string[];
  /** Every search that found it, in the order they ran. */
  provenance: Provenance[];
}

/**
 * What the chat model was asked, counted by Axon in characters; and what every provider call of the run consumed,
 * as the services counted it (`services`).
 */
export interface AgenticUsage {
  modelCalls: number;
  promptCharacters: number;
  completionCharacters: number;
  /**
   * The run's provider calls as the services reported them: the planner's and the answer's chat calls, and every
   * search's (query embeddings, a pipeline's rewrites and rerankers), by kind, provider and model; a call whose
   * service reported nothing is unknown, never estimated. Without cost: a pipeline's price table costs its own runs.
   */
  services: RunUsage;
}

/** The final event of a run, and what `run()` resolves to. */
export interface AgenticResult {
  runId: string;
  /** The question as asked (the last user message, for a conversation). */
  question: string;
  /** For a run given messages: what was searched and answered, the question condensed to stand alone. */
  searchedQuestion?: string;
  status: AgenticStatus;
  results: AgenticResultItem[];
  /** The answer text without citation markers; `undefined` when blocked or not generated. */
  answer: string | undefined;
  /** `generated` by the chat model, `extractive` (quoted sentences) without one, `none` when there is no answer. */
  answerMode: 'generated' | 'extractive' | 'none';
  citations: SpanCitation[];
  droppedCitations: DroppedCitation[];
  stopReason: StopReason;
  /** Planned rounds run (speculative retrieval is round 0 and not counted). */
  iterations: number;
  /** Sub-queries searched, over every round. */
  subQueries: number;
  /** Searches run (speculative probes and sub-queries, per retriever). */
  searches: number;
  failures: AgenticFailure[];
  /** Set when a guardrail blocked the run. */
  blocked?: { stage: 'input' | 'output'; reason: string };
  /** `offline` when no chat model planned the run (the deterministic planner). */
  planner: 'model' | 'offline';
  usage: AgenticUsage;
  ms: number;
}

/** The planner's and answerer's chat model, as the options take it. */
export type AgenticChat = ChatProvider;
