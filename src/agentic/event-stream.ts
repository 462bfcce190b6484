import { abortError } from '../errors.ts';

/**
 * A task's start or end, as `concurrently` reports them. `at` is when it happened (`performance.now()`), stamped by
 * `concurrently` itself: an event can be handed on later than it happened (`endsInOrder` holds an end back until the
 * tasks before it have ended), and a step's duration must not include that wait.
 */
export type TaskEvent<R> =
  | { phase: 'start'; index: number; at: number }
  | { phase: 'end'; index: number; value: R; at: number }
  | { phase: 'fail'; index: number; error: unknown; at: number };

/**
 * Run `task` over `items` with at most `limit` in flight and report each start and end as it happens, so a
 * generator can stream them. Failures are reported, not thrown; an abort rejects at once (tasks that ignore the
 * signal are abandoned, not awaited).
 */
export async function* concurrently<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
  signal: AbortSignal,
  component: string,
): AsyncGenerator<TaskEvent<R>> {
  const queue: TaskEvent<R>[] = [];
  let wake: (() => void) | undefined;
  let next = 0;
  let running = 0;
  let finished = 0;
  const notify = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const launch = () => {
    while (running < limit && next < items.length && !signal.aborted) {
      const index = next++;
      running++;
      queue.push({ phase: 'start', index, at: performance.now() });
      Promise.resolve()
        .then(() => task(items[index], index))
        .then(
          (value) => queue.push({ phase: 'end', index, value, at: performance.now() }),
          (error: unknown) => queue.push({ phase: 'fail', index, error, at: performance.now() }),
        )
        .finally(() => {
          running--;
          finished++;
          launch();
          notify();
        });
    }
  };
  launch();
  while (finished < items.length || queue.length > 0) {
    if (queue.length === 0) await untilAborted(new Promise<void>((resolve) => (wake = resolve)), signal, component);
    while (queue.length > 0) yield queue.shift()!;
  }
}

/** `promise`, or an `ABORTED` rejection as soon as `signal` fires, whichever comes first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, component: string): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(component, signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(component, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The events of `concurrently`, each start as it happens but each end (or failure) only once every task before it
 * has ended: what the tasks found is then used in the order the tasks were given, whichever finished first, so a
 * run's fused ranking (ties go to the result first seen) does not depend on timing and runs repeat exactly. Each
 * event keeps the `at` of when it happened, not of when it is handed on.
 */
export async function* endsInOrder<R>(events: AsyncIterable<TaskEvent<R>>): AsyncGenerator<TaskEvent<R>> {
  const ended = new Map<number, TaskEvent<R>>();
  let next = 0;
  for await (const event of events) {
    if (event.phase === 'start') {
      yield event;
      continue;
    }
    ended.set(event.index, event);
    while (ended.has(next)) {
      const inTurn = ended.get(next)!;
      ended.delete(next++);
      yield inTurn;
    }
  }
}
