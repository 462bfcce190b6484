/**
 * The record of an agentic run that outlives it: its steps as trace events, where each result was found, its
 * span citations, its failures and its status. Kept here, with the pipeline's trace, because the trace store
 * (`src/context/trace-store.ts`) saves agentic runs too; `axon-rag/agentic` exports every name.
 */

/** The steps a run reports, in the order they first occur. */
export type AgenticStep = 'guardrail' | 'condense' | 'speculativeRetrieval' | 'planning' | 'retrieval' | 'documentExpansion' | 'sufficiency';

export type AgenticStepStatus = 'inProgress' | 'succeeded' | 'failed';

/** One step of the run, as it starts (`inProgress`) and as it ends (`succeeded` or `failed`). */
export interface AgenticTraceEvent {
  type: 'trace';
  /** Shared by the `inProgress` event of a step and its closing event. */
  stepId: number;
  step: AgenticStep;
  status: AgenticStepStatus;
  /** 0 for the guardrail on the input, the condense step and the speculative retrieval, then 1, 2, … per planned round. */
  iteration: number;
  input: Record<string, unknown>;
  /** Set on the closing event. */
  output?: Record<string, unknown>;
  warnings: string[];
  /** Milliseconds since the run started, when this event was emitted. */
  atMs: number;
  /** How long the step took (closing events). */
  ms?: number;
}

/** One search that found a result. */
export interface Provenance {
  step: 'speculativeRetrieval' | 'retrieval' | 'documentExpansion';
  iteration: number;
  /** The text searched (the question, for speculative retrieval; the source, for an expansion). */
  query: string;
  retriever: string;
  /** 1-based rank in that search's results (1 for an expansion). */
  rank: number;
}

/** A span of the answer, `[startIndex, endIndex)` in characters, supported by these results. */
export interface SpanCitation {
  startIndex: number;
  endIndex: number;
  references: { resultIndex: number }[];
}

/** A citation the model made that could not be kept, and why. */
export interface DroppedCitation {
  startIndex: number;
  endIndex: number;
  references: { resultIndex: number }[];
  reason: string;
}

/** A sub-query or expansion the loop refused, and why (an unknown retriever, a cap). */
export interface AgenticFailure {
  step: AgenticStep;
  iteration: number;
  reason: string;
  detail?: Record<string, unknown>;
}

/**
 * `answered`: an answer with at least one citation. `missing_evidence`: nothing retrieved, or nothing to
 * quote. `blocked`: a guardrail refused the input or the answer. `not_generated`: `generateResponse: false`.
 */
export type AgenticStatus = 'answered' | 'missing_evidence' | 'blocked' | 'not_generated';
