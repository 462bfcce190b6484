import type { RunContext } from '../contracts/run-context.ts';
import type { Document } from '../document.ts';
import { AxonError } from '../errors.ts';
import type { StageKind } from './trace.ts';

/** What a stage's trace record shows it received (read before it runs) or returned (read after). */
export interface StageView {
  documents?: Document[];
  queries?: string[];
}

/** A stage's handle on its own trace record while it runs. */
export interface StageStep {
  /** What processors are given: the run id, the question, the signal, `warn` and `drop` for this record. */
  readonly context: RunContext;
  /** Fires when the run is cancelled; pass it to every request the stage makes. */
  readonly signal: AbortSignal;
  /** A warning on this stage's record. */
  warn(message: string): void;
  /**
   * Why this stage dropped a document (an input missing from the output is recorded as dropped either way), and
   * the document it was dropped in favour of, by id, where there is one (see `RunContext.drop`).
   */
  drop(id: string, reason: string, related?: { keptId?: string }): void;
  /** Stage-specific facts for the record's `detail`; later calls add to earlier ones. */
  detail(facts: Record<string, unknown>): void;
  /** Keep this stage out of the trace: it had nothing to report. Only a stage declared `optional` may. */
  discard(): void;
}

/**
 * What a stage's `run` returns: the state the next stage sees (the same object, changed, or a copy made with
 * `{ ...state }` so nothing a later stage needs is lost), or an async generator that yields events while it
 * works (answer text as it streams) and returns that state.
 */
export type StageOutcome<State, Event> = State | Promise<State> | AsyncGenerator<Event, State, undefined>;

/**
 * One step of a run: the run's state in, the state out, its own trace record. The runner (`runStages`) opens
 * the record with `input(state)`, times the stage, reports its span, cancels it, and closes the record with
 * `output(state)` and what `run` said through its `StageStep`.
 *
 * @example
 * const shout: Stage<{ searchQuestion: string }> = {
 *   kind: 'condense',
 *   name: 'upper-case',
 *   input: (state) => ({ queries: [state.searchQuestion] }),
 *   run: (state) => ({ ...state, searchQuestion: state.searchQuestion.toUpperCase() }),
 *   output: (state) => ({ queries: [state.searchQuestion] }),
 * };
 */
export interface Stage<State, Event = never> {
  /** The kind recorded in the trace (`StageRecord.stage`), and the span's name (`axon.<kind>`). */
  readonly kind: StageKind;
  /** The component recorded in the trace (`StageRecord.name`), e.g. `file-store:vector`, `adaptive-threshold`. */
  readonly name: string;
  /** A record the stage may discard (`StageStep.discard`); its span starts only once the record is kept. @default false */
  readonly optional?: boolean;
  /** Whether the stage runs in this state; one that does not leaves no record. @default always */
  applies?(state: State): boolean;
  /** What the record shows as received. @default nothing (no input ids) */
  input?(state: State): StageView;
  run(state: State, step: StageStep): StageOutcome<State, Event>;
  /** What the record shows as returned. @default nothing (no output ids; the input's queries) */
  output?(state: State): StageView;
}

/**
 * Stages known only when the run reaches them: one search per query and retriever, say. `expand` is called
 * with the state at that point and its stages run in order, each with its own record.
 */
export interface StageGroup<State, Event = never> {
  readonly kind: StageKind;
  /** How the group is found in a stage list (`insertStage`); its stages record their own names. */
  readonly name: string;
  expand(state: State): readonly Stage<State, Event>[];
}

/** An entry of a stage list: a stage, or a group of stages known at run time. */
export type StageEntry<State, Event = never> = Stage<State, Event> | StageGroup<State, Event>;

/** Where `insertStage` puts stages: before or after the first entry of this kind or name. */
export type StagePosition = { before: string } | { after: string };

/**
 * A copy of `stages` with `added` inserted before or after the first entry whose `name` or `kind` is the
 * given one (names are tried first: `{ after: 'adaptive-threshold' }`, then kinds: `{ before: 'pre-process' }`
 * is before the first pre-processor). For a position no entry matches, `before` puts them at the start and
 * `after` at the end, so `{ before: 'pre-process' }` works for a pipeline without pre-processors too.
 *
 * @example
 * protected retrievalStages(stages: RagStage[]): RagStage[] {
 *   return insertStage(stages, { before: 'pre-process' }, condense);
 * }
 * @throws AxonError `INVALID_OPTION` for a position that is neither `{ before }` nor `{ after }`.
 */
export function insertStage<Entry extends { readonly kind: string; readonly name: string }>(
  stages: readonly Entry[],
  position: StagePosition,
  ...added: Entry[]
): Entry[] {
  const target = 'before' in position ? position.before : 'after' in position ? position.after : undefined;
  if (typeof target !== 'string') {
    throw new AxonError('INVALID_OPTION', 'A stage position is { before: "<kind or name>" } or { after: "<kind or name>" }.', {
      component: 'pipeline',
      fix: "Name the stage to insert next to by its kind or name: { after: 'dedupe' }, { before: 'context' }.",
      details: { option: 'position' },
    });
  }
  const byName = stages.findIndex((entry) => entry.name === target);
  const found = byName >= 0 ? byName : stages.findIndex((entry) => entry.kind === target);
  const copy = stages.slice();
  if ('before' in position) copy.splice(Math.max(found, 0), 0, ...added);
  else copy.splice(found >= 0 ? lastOfRun(stages, found, byName >= 0) + 1 : copy.length, 0, ...added);
  return copy;
}

// --- Internal helpers ---

/** After a kind, the position of the last entry of the run of that kind (after every post-processor, not the first). */
function lastOfRun(stages: readonly { readonly kind: string }[], found: number, byName: boolean): number {
  if (byName) return found;
  let last = found;
  while (last + 1 < stages.length && stages[last + 1].kind === stages[found].kind) last++;
  return last;
}
