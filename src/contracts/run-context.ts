import type { ChatProvider } from './chat.ts';
import type { EmbeddingsProvider } from './embeddings.ts';
import type { Reranker } from './reranker.ts';

/** What every stage of a run is given besides its own input. */
export interface RunContext {
  /** Id of this run; the trace is stored under it. */
  readonly runId: string;
  /** The user's question exactly as asked. Pre-processors may search with other text; later stages still see this. */
  readonly question: string;
  /** Fires when the caller cancels the run. Pass it to every request you make. */
  readonly signal: AbortSignal;
  /** Record a warning for the current stage; it appears in the trace. */
  warn(message: string): void;
  /**
   * Record why the current stage dropped a document; it appears in the trace. When it was dropped in favour of
   * another document (a duplicate's original, the selected document it was too similar to), pass that one as
   * `related.keptId`: printouts then name it by source and chunk beside the reason, so the reason itself should
   * not repeat its id ("same content as another document").
   */
  drop(id: string, reason: string, related?: { keptId?: string }): void;
  /**
   * Counts what this stage's provider calls consume into the run's usage (the result's `usage`, this stage's record,
   * a span per call). Call the provider through it: `const chat = context.usage?.chat(this.chat) ?? this.chat`.
   * Set by every run; optional so that a context written by hand (a test's) needs none. A processor that calls its
   * provider directly still works: its calls are simply not counted.
   */
  readonly usage?: UsageMeter;
}

/**
 * Hands out providers whose calls are counted: each returns the provider itself, every member as it was, with each
 * call's usage (what the service reported through `onUsage`, or unknown when it reported nothing) added to the run's
 * usage under the provider's `name` and model. A call that fails is not counted.
 */
export interface UsageMeter {
  chat(provider: ChatProvider): ChatProvider;
  embeddings(provider: EmbeddingsProvider): EmbeddingsProvider;
  reranker(provider: Reranker): Reranker;
}
