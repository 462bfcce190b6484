import type { ChatProvider } from '../contracts/chat.ts';
import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import type { PostProcessor } from '../contracts/post-processor.ts';
import type { PreProcessor, SearchQuery } from '../contracts/pre-processor.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { ContextBuilderOptions, MemoryInput, ToolResultInput } from '../context/builder.ts';
import type { ContractStatus, EvidenceConflict } from '../context/contract.ts';
import type { CallerContext } from '../context/eligibility.ts';
import type { ConversationHistory } from '../conversation/condense.ts';
import type { HistorySummary } from '../conversation/history-window.ts';
import type { ContextGuardrailCheck, Guardrail, StopReason } from '../context/outcome.ts';
import type { ContextPacket, OmittedRef } from '../context/packet.ts';
import type { PipelineVersion, TraceStore } from '../context/trace-store.ts';
import type { Citation, Document } from '../document.ts';
import type { Filter } from '../filter/types.ts';
import type { HybridWeights, SearchMode } from '../pipeline/search-mode.ts';
import type { RunTrace, StageRecord } from '../pipeline/trace.ts';
import type { RunUsage } from '../pipeline/usage.ts';

// What a RAG run takes and gives: the options of `retrieve`, `answer` and `stream`, and their results. `RAG`
// (src/rag.ts) exports every name.

export interface RetrieveOptions {
  /** Documents fetched from the store per search query (per retriever, in hybrid mode). @default the store's topK (50) */
  topK?: number;
  /**
   * `vector`, `keyword` or `hybrid`. Keyword and hybrid need a store with a keyword index (`FileStore`,
   * `MemoryStore`). The keyword query is the search query's text: with HyDE, the hypothetical passage.
   * @default this pipeline's `searchMode()` (`hybrid` with a keyword index, else `vector`, unless a subclass or the configuration says otherwise)
   */
  searchMode?: SearchMode;
  /** Weights of the vector and keyword lists in hybrid fusion. @default this pipeline's `hybridWeights()` ({ vector: 1, keyword: 1 }) */
  hybridWeights?: HybridWeights;
  /** Metadata filter applied inside the search (SPEC §4). */
  filter?: Filter;
  /** Candidates of an approximate vector search (a store with an ANN index); see `VectorSearchOptions.ef`. @default the store's */
  ef?: number;
  /** Scan exactly even where the store would use its ANN index. @default false */
  exact?: boolean;
  signal?: AbortSignal;
  /** Use this id for the run (and its trace) instead of a random UUID. */
  runId?: string;
  /**
   * Who is asking. Their tenant and roles become a store filter applied inside the search (so `topK` is spent on
   * documents they may see), and every document is checked again before it is returned (tenant, roles, redaction,
   * trust, freshness at `caller.now`). Without a caller the check still runs, for a caller of no tenant and no role,
   * but the search is not filtered.
   */
  caller?: CallerContext;
  /**
   * The conversation this question follows. The run's condense stage rewrites a follow-up into a question that
   * stands alone before anything is searched (the result's `searchedQuestion`), and an answer gets the history as
   * the packet's conversation section, with its own budget, never as evidence. `Conversation.ask` and
   * `RAG.converse` set it; give it yourself to keep the history elsewhere. @default none (the question stands alone)
   */
  conversation?: ConversationOptions;
}

/** A run's conversation: the history the question follows, and how it is used (see `RetrieveOptions.conversation`). */
export interface ConversationOptions {
  /** Earlier turns, oldest first: the turns a `ChatHistory` loaded, or user and assistant messages. */
  history: ConversationHistory;
  /**
   * How a follow-up is rewritten before retrieval: `model` by the pipeline's chat model (offline when it has none),
   * `offline` by the deterministic rewrite (`condenseQuestion`) even with a chat model, `none` searched as asked.
   * @default 'model'
   */
  condense?: 'model' | 'offline' | 'none';
  /** Tokens the packet's conversation section may take (the history is windowed to fit). @default a quarter of the packet's room for the prompt */
  maxTokens?: number;
  /** A summary of older turns an earlier run made (its condense record's `detail.summary`), reused while it still covers the turns left out. */
  summary?: HistorySummary;
}

/** How the context packet given to the model is assembled and budgeted. */
export interface ContextOptions extends Omit<ContextBuilderOptions, 'runId'> {
  /** Policies the answer must follow; pinned, placed after the instructions. @default [] */
  policies?: string[];
  /** The task's goal or working state; pinned. */
  goal?: string;
  /** Tool outputs given to the model as data. @default [] */
  toolResults?: ToolResultInput[];
  /** Memories given to the model as data. @default [] */
  memories?: MemoryInput[];
  /** Worked examples. @default [] */
  examples?: string[];
  /** Known gaps to tell the model about. @default [] */
  exclusions?: string[];
}

export interface AnswerOptions extends RetrieveOptions {
  /** The packet's budget and extra sections, over this pipeline's `contextOptions()`. */
  context?: ContextOptions;
  /** Checked after the packet is built and before the model is called. */
  guardrail?: Guardrail<ContextGuardrailCheck>;
  /** Where the run's trace is saved. @default this pipeline's `traceStore()` (none unless a subclass gives one) */
  traceStore?: TraceStore;
  /** Version facts only the caller knows (the configuration hash, splitter settings), recorded in the trace. */
  pipelineVersion?: Partial<PipelineVersion>;
  /**
   * How conflicting evidence is found: `metadata` (versions, `supersedes`, `facts`), or `model`, which also asks the
   * chat model against a schema when the metadata shows none (one more model call). @default this pipeline's `conflictCheck()` ('metadata')
   */
  conflictCheck?: ConflictCheck;
}

/** How conflicting evidence is found; see `AnswerOptions.conflictCheck`. */
export type ConflictCheck = 'metadata' | 'model';

export interface RetrievalResult {
  /** The documents after every post-processor and the eligibility check (redacted where `pii`), best first. */
  documents: Document[];
  /** Documents refused by the eligibility check (`not_allowed`, `stale`) or superseded (`stale`). */
  omitted: OmittedRef[];
  /** The filter the searches ran with: the caller's eligibility filter and the given one, combined. */
  filter?: Filter;
  /** Every document the searches found, with its score there, before fusion, post-processing and eligibility. */
  retrieved: { id: string; score: number; sourceName: string }[];
  /** The search queries the pre-processors produced. */
  queries: SearchQuery[];
  /** The question that was searched: the question as asked, or the follow-up the condense stage rewrote. Set by `RAG`. */
  searchedQuestion?: string;
  /** How the candidates were found. */
  searchMode: SearchMode;
  trace: RunTrace;
  /**
   * What the run's provider calls consumed (query embeddings, pre-processors' and rerankers' calls), by kind, provider
   * and model, with its cost when the pipeline has `prices()`. Set on every result a `RAG` returns.
   */
  usage?: RunUsage;
}

/**
 * `answered`: the text answers from cited evidence. `missing_evidence`: nothing eligible supports an answer (the
 * model was not called). `conflicting_evidence`: eligible sources disagree (each is cited). `refused`: a guardrail,
 * the policy or the budget refused the run.
 */
export type AnswerStatus = ContractStatus;

export interface Answer {
  status: AnswerStatus;
  text: string;
  /**
   * The question that was searched: the question as asked, or, in a conversation, the follow-up rewritten to stand
   * alone by the condense stage. Set by `RAG.answer` and `RAG.stream`.
   */
  searchedQuestion?: string;
  /** `generated` by the chat model, or `extractive` (quoted sentences) when no chat model is configured. */
  mode: 'generated' | 'extractive';
  citations: Citation[];
  /** The documents given to the model as evidence, in label order (label = index + 1). */
  documents: Document[];
  /** Ids of the evidence in the packet, in label order. */
  evidenceRefs: string[];
  /** What is missing, when the status is `missing_evidence`. */
  missingEvidence?: string[];
  /** Sentences of an `answered` answer that state something without a citation. */
  uncitedSentences?: string[];
  /** The disagreement, when the status is `conflicting_evidence`. */
  conflicts?: EvidenceConflict[];
  /** Why the run was refused, when the status is `refused`. */
  refusal?: string;
  stopReason: StopReason;
  /** Everything left out of the packet, with the reason: eligibility, supersession, relevance, duplicates, budget. */
  omitted: OmittedRef[];
  /** What the model was given (or would have been). */
  packet: ContextPacket;
  trace: RunTrace;
  /**
   * Set (true) when the chat model's reply was cut off: it hit the token limit, or its stream stopped before
   * the end (the trace's generation stage says which). The text is then partial; absent for a whole reply.
   */
  truncated?: true;
  /**
   * What every provider call of the run consumed (retrieval's and the answer's), by kind, provider and model, with
   * its cost when the pipeline has `prices()`; calls whose service reported nothing are counted as unknown, never
   * estimated. Set on every answer a `RAG` returns.
   */
  usage?: RunUsage;
}

/** What `stream` yields, in order: stage records as they finish, answer text deltas, then one result. */
export type RagEvent = { type: 'stage'; record: StageRecord } | { type: 'delta'; text: string } | { type: 'result'; answer: Answer };

export interface AddDocumentsOptions {
  signal?: AbortSignal;
  /** Called as embedding progresses. */
  onProgress?: (embedded: number, total: number) => void;
}

/** The parts a `RAG` was built from, as its overridable methods returned them. */
export interface RagComponents {
  embeddings: EmbeddingsProvider;
  store: VectorStore;
  preProcessors: PreProcessor[];
  postProcessors: PostProcessor[];
  chat: ChatProvider | undefined;
}
