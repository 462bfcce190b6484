/**
 * JSON with object keys sorted, so that equal values give equal text whatever order their keys were written in:
 * the key of an embedding cache's identity, a trace's configuration hash, a stored table's options compared with
 * a store's.
 */

export interface CanonicalJsonOptions {
  /**
   * What stands for a value JSON has no text for (`undefined`, a function, a symbol) at the top or in an array.
   * Object fields holding one are left out, as `JSON.stringify` leaves them out. @default 'null'
   */
  absent?: 'null' | 'undefined';
}

/**
 * `value` as JSON with every object's keys sorted by UTF-16 code units and its `undefined` fields left out; arrays
 * keep their order. Numbers and strings are written as `JSON.stringify` writes them; `toJSON` is not called (a
 * `Date` has no own keys: `{}`). Equal output for equal data is what callers rely on, so the text never changes
 * between versions for the same value.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  const absent = options.absent ?? 'null';
  const write = (item: unknown): string => {
    if (item === null || typeof item !== 'object') return JSON.stringify(item) ?? absent;
    if (Array.isArray(item)) return `[${item.map(write).join(',')}]`;
    const fields = Object.entries(item)
      .filter(([, field]) => field !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${fields.map(([key, field]) => `${JSON.stringify(key)}:${write(field)}`).join(',')}}`;
  };
  return write(value);
}
