import type { JsonValue } from '../document.ts';

/**
 * Convert a parsed value (YAML front matter, a JSON record, …) into a JSON value that document metadata
 * accepts: dates become ISO strings, big integers become numbers when exact (else strings), non-finite
 * numbers become null, and `undefined`, functions and symbols are left out.
 */
export function toJsonValue(value: unknown): JsonValue | undefined {
  if (value === null) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map((item) => toJsonValue(item) ?? null);
  if (value instanceof Map) return toJsonObject(Object.fromEntries(value));
  if (typeof value === 'object') return toJsonObject(value as Record<string, unknown>);
  return undefined;
}

/** `toJsonValue` over the fields of an object; fields with no JSON form are left out. */
export function toJsonObject(value: Record<string, unknown>): Record<string, JsonValue> {
  const result: Record<string, JsonValue> = {};
  for (const [key, item] of Object.entries(value)) {
    const converted = toJsonValue(item);
    if (converted !== undefined) result[key] = converted;
  }
  return result;
}

/**
 * Whether `value` nests objects and arrays more than `levels` deep (a scalar is 0 levels, `{}` one, `{ a: [] }`
 * two). Walks with its own stack, so a value nested a hundred thousand deep is answered, not a stack overflow.
 */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > levels) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
