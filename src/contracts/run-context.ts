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
  /** Record why the current stage dropped a document; it appears in the trace. */
  drop(id: string, reason: string): void;
}
