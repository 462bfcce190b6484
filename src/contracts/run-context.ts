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
}
