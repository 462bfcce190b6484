/**
 * The documents an index hands out: deep copies of their JSON metadata (a caller's change never reaches the stored
 * document), and the order every store returns the documents of one source in.
 */
import type { Document, JsonValue } from '../../src/document.ts';

/** A deep copy of a JSON value (faster than `structuredClone` for small metadata objects). */
export function cloneJson<T extends JsonValue | Record<string, JsonValue>>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  const copy: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) {
    const item = cloneJson((value as Record<string, JsonValue>)[key]);
    // Plain assignment of "__proto__" would change the copy's prototype instead of adding a field.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as T;
}

/** The order of `getBySource` results: source name, then `metadata.chunkIndex` (documents without one last), then id. */
export function compareForSource(left: Document, right: Document): number {
  if (left.sourceName !== right.sourceName) return left.sourceName < right.sourceName ? -1 : 1;
  const leftChunk = left.metadata.chunkIndex;
  const rightChunk = right.metadata.chunkIndex;
  const leftHas = typeof leftChunk === 'number';
  const rightHas = typeof rightChunk === 'number';
  // Documents without a chunk index come after the numbered chunks of their source.
  if (leftHas && rightHas && leftChunk !== rightChunk) return (leftChunk as number) - (rightChunk as number);
  if (leftHas !== rightHas) return leftHas ? -1 : 1;
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}
