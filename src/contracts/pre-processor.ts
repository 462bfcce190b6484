import type { RunContext } from './run-context.ts';

/** A text to search for, produced from the question by the pre-processors. */
export interface SearchQuery {
  /** The text that is embedded and searched. */
  text: string;
  /** Which pre-processors produced it, in order (e.g. `['query-transformation:HYDE']`). Empty for the raw question. */
  producedBy: string[];
}

/**
 * Turns one search query into one or more. Pre-processors run in order; each is applied to every query the
 * previous one returned, so they chain (rewrite, then decompose). When several queries come out, each is
 * searched and the results are fused by reciprocal rank fusion.
 */
export interface PreProcessor {
  /** Short name shown in the trace, e.g. `query-transformation`. */
  readonly name: string;
  /** Return at least one query. Return `[query]` to pass it through unchanged. */
  process(query: SearchQuery, context: RunContext): Promise<SearchQuery[]>;
}
