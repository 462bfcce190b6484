import type { ChatFinish } from '../contracts/chat.ts';
import type { SearchQuery } from '../contracts/pre-processor.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { ConversationInput } from '../context/builder.ts';
import type { EvidenceConflict } from '../context/contract.ts';
import type { CallerContext, EligibilityPolicy } from '../context/eligibility.ts';
import type { Evidence } from '../context/evidence.ts';
import type { ContextGuardrailCheck, Guardrail } from '../context/outcome.ts';
import type { ContextPacket, OmittedRef } from '../context/packet.ts';
import type { Document, Vector } from '../document.ts';
import type { Filter } from '../filter/types.ts';
import type { RankedList } from '../pipeline/fusion.ts';
import type { StageEntry } from '../pipeline/stage.ts';
import type { RunTrace } from '../pipeline/trace.ts';
import type { HybridWeights, SearchMode } from '../pipeline/search-mode.ts';
import type { Answer, ConflictCheck, ContextOptions, ConversationOptions, RagComponents, RagEvent } from './types.ts';

/** How a run searches, resolved and checked before its first stage. */
export interface SearchPlan {
  mode: SearchMode;
  /** Weights of the vector and keyword lists in hybrid fusion. */
  weights: Required<HybridWeights>;
  /** Documents fetched per search query and retriever. @default the store's */
  topK: number | undefined;
  /** What every search is filtered by: the given filter and the caller's eligibility filter, combined. */
  filter: Filter | undefined;
  /** Whether the caller's eligibility is part of `filter`. */
  eligibilityFiltered: boolean;
  ef?: number;
  exact?: boolean;
}

/** A document as the searches found it, before fusion and post-processing. */
export interface RetrievedRef {
  id: string;
  score: number;
  sourceName: string;
}

/**
 * What the search stages (embed, search, fusion, de-duplication) read and write. Every run that searches has
 * it: a pipeline's run (`RagRunState`) and the agentic retriever's search of a bare store.
 */
export interface SearchState {
  readonly signal: AbortSignal;
  readonly parts: { readonly store: VectorStore };
  readonly search: SearchPlan;
  /**
   * The search queries; empty until the first stage that needs them, which starts from the search question
   * alone (`searchQueries`). Pre-processors replace them.
   */
  queries: SearchQuery[];
  /** One embedding per query (not in keyword mode). */
  vectors: Vector[];
  /** What each search found, best first, in the order searched. */
  lists: RankedList[];
  /** Every document the searches found, by id, with its score there. */
  retrieved: Map<string, RetrievedRef>;
  /** The documents as the last stage left them, best first. */
  documents: Document[];
}

/** How a run's answer is written: set for `answer` and `stream`, absent for `retrieve`. */
export interface AnswerPlan {
  /** The packet's sections and budget: a stage before `context` may add to its lists (memories, tool results, …). */
  context: ContextOptions;
  /** The system instructions (the pipeline's `instructions()`). */
  instructions: string;
  guardrail: Guardrail<ContextGuardrailCheck> | undefined;
  conflictCheck: ConflictCheck;
}

/**
 * The state of one `RAG` run, passed from stage to stage. Set before the first stage: the question, the parts,
 * the search plan, the caller and policy, `answering`; each stage then reads what earlier ones left and writes
 * its own part (the comment on each field says which).
 */
export interface RagRunState extends SearchState {
  /** The question as asked: the trace's `question`, the packet's user request, what a guardrail is shown. */
  readonly question: string;
  /** The run's trace: the records of the stages that finished, in order. */
  readonly trace: RunTrace;
  /**
   * The question retrieval works with: the queries start from it, post-processors rank against it, the
   * extractive answer and the conflict check read it. The question as asked unless a stage before pre-processing
   * (a conversation's condense step) rewrote it into a stand-alone one; its record shows both.
   */
  searchQuestion: string;
  readonly parts: RagComponents;
  readonly caller: CallerContext | undefined;
  readonly policy: EligibilityPolicy;
  /** Documents left out, with the reason (eligibility, supersession); the context stage adds the packet's. */
  omitted: OmittedRef[];
  readonly answering: AnswerPlan | undefined;
  /**
   * The conversation the question follows, when it was asked in one (`RetrieveOptions.conversation`): the condense
   * stage rewrites `searchQuestion` from it and sets `conversation` for the packet. Absent for a question asked alone.
   */
  readonly history?: ConversationOptions;
  /**
   * The conversation so far, set by a stage before `context` (a conversation's condense step): the context stage
   * gives it to the packet as its own section, with its own budget, never as evidence.
   */
  conversation?: ConversationInput;
  /** Set by the context stage: the packet and the evidence in it, in label order. */
  packet?: ContextPacket;
  evidence?: Evidence[];
  /** Set by the generate stage's guardrail step: why the guardrail refused. */
  refusal?: string;
  /** Set by the generate stage's conflict step: where the evidence disagrees. */
  conflicts?: EvidenceConflict[];
  /** Set by the generate stage: the answer (its citations by its cite step). */
  answer?: Answer;
  /** Set by the generate stage for a generated answer: how the model's reply ended. */
  finish?: ChatFinish;
}

/** What a RAG run's stages yield besides their records: answer text as it streams. */
export type RagStageEvent = Extract<RagEvent, { type: 'delta' }>;

/** An entry of a `RAG`'s stage lists (`retrievalStages`, `answerStages`). */
export type RagStage = StageEntry<RagRunState, RagStageEvent>;

/** The search queries of a run: the pre-processors' when they ran, else the search question alone. */
export function searchQueries(state: Pick<RagRunState, 'queries'> & { searchQuestion?: string }): SearchQuery[] {
  if (state.queries.length === 0 && state.searchQuestion !== undefined) state.queries = [{ text: state.searchQuestion, producedBy: [] }];
  return state.queries;
}
