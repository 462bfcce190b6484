import { throwIfAborted } from '../errors.ts';

/**
 * Run `task` over `items` with at most `limit` tasks in flight, keeping results in input order.
 * The first failure aborts the remaining work (tasks not yet started never start) and is rethrown.
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
  options: { signal?: AbortSignal; component?: string } = {},
): Promise<R[]> {
  const component = options.component ?? 'runtime';
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (!failed && next < items.length) {
      throwIfAborted(options.signal, component);
      const index = next++;
      try {
        results[index] = await task(items[index], index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  const settled = await Promise.allSettled(workers);
  const rejection = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (rejection) throw rejection.reason;
  return results;
}

/** Split `items` into consecutive slices of at most `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let start = 0; start < items.length; start += size) slices.push(items.slice(start, start + size));
  return slices;
}
