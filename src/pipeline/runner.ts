import { AxonError, throwIfAborted } from '../errors.ts';
import type { Stage, StageEntry, StageStep } from './stage.ts';
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
      if ('expand' in entry) {
        for (const stage of entry.expand(state)) state = yield* runStage(stage, state, recorder, signal);
      } else {
        state = yield* runStage(entry, state, recorder, signal);
      }
    }
    return state;
  } catch (error) {
    recorder.fail(error);
    throw error;
  }
}

/** Run `stages` to the end (see `runStages`) when nobody reads the records as they finish; returns the last state. */
export async function runStagesToEnd<State, Event = never>(
  stages: readonly StageEntry<State, Event>[],
  initial: State,
  recorder: TraceRecorder,
  signal: AbortSignal,
): Promise<State> {
  const run = runStages(stages, initial, recorder, signal);
  let step = await run.next();
  while (!step.done) step = await run.next();
  return step.value;
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

async function* runStage<State, Event>(
  stage: Stage<State, Event>,
  state: State,
  recorder: TraceRecorder,
  signal: AbortSignal,
): AsyncGenerator<StageEvent | Event, State, undefined> {
  if (stage.applies !== undefined && !stage.applies(state)) return state;
  throwIfAborted(signal, stage.name);
  const handle = recorder.begin(stage.kind, stage.name, stage.input?.(state) ?? {}, signal, { optional: stage.optional === true });
  const step = new Step(handle, stage);
  const outcome = stage.run(state, step);
  const next = isAsyncGenerator<Event, State>(outcome) ? yield* outcome : await outcome;
  throwIfAborted(signal, stage.name);
  if (step.discarded) {
    handle.discard();
    return next;
  }
  const view = stage.output?.(next) ?? {};
  yield { type: 'stage', record: handle.end(step.facts === undefined ? view : { ...view, detail: step.facts }) };
  return next;
}

class Step implements StageStep {
  facts: Record<string, unknown> | undefined;
  discarded = false;

  constructor(
    private readonly handle: StageHandle,
    private readonly stage: { readonly name: string; readonly optional?: boolean },
  ) {}

  get context() {
    return this.handle.context;
  }

  get signal() {
    return this.handle.context.signal;
  }

  warn(message: string): void {
    this.handle.warn(message);
  }

  drop(id: string, reason: string): void {
    this.handle.drop(id, reason);
  }

  detail(facts: Record<string, unknown>): void {
    this.facts = this.facts === undefined ? { ...facts } : Object.assign(this.facts, facts);
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
