import { AxonError, throwIfAborted } from '../errors.ts';
import type { Stage, StageEntry, StageStep, StageView } from './stage.ts';
import type { StageHandle, StageRecord, TraceRecorder } from './trace.ts';

/** A finished stage, as the runner yields it. */
export interface StageEvent {
  type: 'stage';
  record: StageRecord;
}

/**
 * Run `stages` in order over `state`, yielding each stage's record as it finishes (and whatever a streaming
 * stage yields while it works), and returning the last state. Each stage is timed and traced (a record in
 * `recorder`, an OpenTelemetry span) and checked for cancellation before and after it runs. On an error the
 * run's open spans end as failed (`recorder.fail`) and the error propagates unchanged.
 *
 * @throws whatever a stage throws; AxonError `ABORTED` when `signal` fires between stages
 */
export async function* runStages<State, Event = never>(
  stages: readonly StageEntry<State, Event>[],
  initial: State,
  recorder: TraceRecorder,
  signal: AbortSignal,
): AsyncGenerator<StageEvent | Event, State, undefined> {
  let state = initial;
  try {
    for (const entry of stages) {
      const group = 'expand' in entry ? entry.expand(state) : undefined;
      for (let index = 0; index < (group === undefined ? 1 : group.length); index++) {
        const stage = group === undefined ? (entry as Stage<State, Event>) : group[index];
        const step = open(stage, state, recorder, signal);
        if (step === undefined) continue;
        const outcome = stage.run(state, step);
        state = isAsyncGenerator<Event, State>(outcome) ? yield* outcome : outcome instanceof Promise ? await outcome : (outcome as State);
        const record = close(stage, step, state, signal);
        if (record !== undefined) yield { type: 'stage', record };
      }
    }
    return state;
  } catch (error) {
    recorder.fail(error);
    throw error;
  }
}

/**
 * Run `stages` to the end, as `runStages` does, when nobody reads the records as they finish (`retrieve`):
 * the same records, spans and checks, without handing each record out. What a streaming stage yields is
 * dropped. Returns the last state.
 */
export async function runStagesToEnd<State, Event = never>(
  stages: readonly StageEntry<State, Event>[],
  initial: State,
  recorder: TraceRecorder,
  signal: AbortSignal,
): Promise<State> {
  let state = initial;
  try {
    for (const entry of stages) {
      const group = 'expand' in entry ? entry.expand(state) : undefined;
      for (let index = 0; index < (group === undefined ? 1 : group.length); index++) {
        const stage = group === undefined ? (entry as Stage<State, Event>) : group[index];
        const step = open(stage, state, recorder, signal);
        if (step === undefined) continue;
        const outcome = stage.run(state, step);
        state = isAsyncGenerator<Event, State>(outcome) ? await drain(outcome) : outcome instanceof Promise ? await outcome : (outcome as State);
        close(stage, step, state, signal);
      }
    }
    return state;
  } catch (error) {
    recorder.fail(error);
    throw error;
  }
}

/**
 * The last value `pick` finds among the events of `stream`, read to its end (a streaming run's result event).
 *
 * @throws AxonError `INTERNAL` when the stream ends without one: a bug, reported with `invariant`
 */
export async function finalEvent<Event, Result>(
  stream: AsyncIterable<Event>,
  pick: (event: Event) => Result | undefined,
  component: string,
  invariant: string,
): Promise<Result> {
  for await (const event of stream) {
    const found = pick(event);
    if (found !== undefined) return found;
  }
  throw new AxonError('INTERNAL', 'The run ended without a result.', {
    component,
    fix: 'This is a bug in Axon: please report it with the stack trace, the question and the options.',
    details: { invariant },
  });
}

// --- Internal helpers ---

/** Open a stage that applies: its record begins. `undefined` for a stage that does not apply to this state. */
function open<State, Event>(stage: Stage<State, Event>, state: State, recorder: TraceRecorder, signal: AbortSignal): Step | undefined {
  if (stage.applies !== undefined && !stage.applies(state)) return undefined;
  throwIfAborted(signal, stage.name);
  const handle = recorder.begin(stage.kind, stage.name, stage.input?.(state) ?? NOTHING, signal, stage.optional ? OPTIONAL : NOT_OPTIONAL);
  return new Step(handle, stage);
}

/** Close a stage that ran: its record, or `undefined` when it discarded it. */
function close<State, Event>(stage: Stage<State, Event>, step: Step, state: State, signal: AbortSignal): StageRecord | undefined {
  throwIfAborted(signal, stage.name);
  if (step.discarded) {
    step.handle.discard();
    return undefined;
  }
  const view = stage.output?.(state) ?? NOTHING;
  return step.handle.end(step.facts === undefined ? view : { documents: view.documents, queries: view.queries, detail: step.facts });
}

/** A streaming stage's outcome, its events dropped. */
async function drain<State, Event>(outcome: AsyncGenerator<Event, State, undefined>): Promise<State> {
  let next = await outcome.next();
  while (!next.done) next = await outcome.next();
  return next.value;
}

const NOTHING: StageView = {};
const OPTIONAL = { optional: true };
const NOT_OPTIONAL = { optional: false };

class Step implements StageStep {
  readonly context: StageStep['context'];
  readonly signal: AbortSignal;
  facts: Record<string, unknown> | undefined;
  discarded = false;

  constructor(
    readonly handle: StageHandle,
    private readonly stage: { readonly name: string; readonly optional?: boolean },
  ) {
    this.context = handle.context;
    this.signal = handle.context.signal;
  }

  warn(message: string): void {
    this.handle.warn(message);
  }

  drop(id: string, reason: string, related?: { keptId?: string }): void {
    this.handle.drop(id, reason, related);
  }

  detail(facts: Record<string, unknown>): void {
    // The first facts are kept as given; later ones make a merged copy, so no caller's object is changed.
    this.facts = this.facts === undefined ? facts : { ...this.facts, ...facts };
  }

  discard(): void {
    if (this.stage.optional !== true) {
      throw new AxonError('INTERNAL', `Stage "${this.stage.name}" discarded its record without being declared optional.`, {
        component: this.stage.name,
        fix: 'Declare the stage `optional: true` if it may leave no record.',
        details: { invariant: 'only-optional-stages-discard' },
      });
    }
    this.discarded = true;
  }
}

function isAsyncGenerator<Event, State>(value: unknown): value is AsyncGenerator<Event, State, undefined> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncGenerator).next === 'function' && Symbol.asyncIterator in value;
}
