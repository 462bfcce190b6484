import type { z } from 'zod';
import type { ConfigIssueCode } from '../errors.ts';

/**
 * The candidate `word` was most likely meant as, for a "did you mean" hint: the nearest by edit distance
 * (insertions, deletions, substitutions and swaps of neighbours, ignoring case), when it is close enough to be
 * a typo: at most a third of the word's length, and at least one edit. Failing that, the candidate that begins
 * the same way, when the shared beginning is most of the word (at least 4 characters and 60%): another ending of
 * the same word (`embedder` for `embeddings`, `conf` for `config`). `undefined` when none is that close.
 *
 * @example closestName('embedings', ['embeddings', 'chat', 'store']) // 'embeddings'
 * @example closestName('embedder', ['embeddings', 'chat', 'store'])  // 'embeddings'
 */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const target = word.toLowerCase();
  const allowed = Math.max(1, Math.floor(target.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  let sameStart: string | undefined;
  let sameStartLength = Math.max(4, Math.ceil(target.length * 0.6)) - 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const lowered = candidate.toLowerCase();
    const distance = editDistance(target, lowered);
    if (distance < bestDistance && distance <= allowed) {
      best = candidate;
      bestDistance = distance;
    }
    const shared = commonPrefixLength(target, lowered);
    if (shared > sameStartLength) {
      sameStart = candidate;
      sameStartLength = shared;
    }
  }
  return best ?? sameStart;
}

/** ` (did you mean "x"?)` when `word` is close to one of `candidates`, else an empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const suggestion = closestName(word, candidates);
  return suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
}

/** One problem of a zod validation, with unknown keys split into one problem each, at the key's own path. */
export interface OptionIssue {
  path: PropertyKey[];
  /** zod's issue code. */
  code: ConfigIssueCode;
  message: string;
}

/**
 * The problems of a failed zod validation as `OptionIssue`s: an unknown key becomes `unknown option "x"` at its
 * own path, with the nearest option the schema does accept at that place as a "did you mean" hint.
 */
export function describeOptionIssues(schema: z.ZodType, error: z.ZodError): OptionIssue[] {
  return error.issues.flatMap((issue): OptionIssue[] => {
    if (issue.code !== 'unrecognized_keys') return [{ path: issue.path, code: issue.code, message: issue.message }];
    const known = objectKeysAt(schema, issue.path);
    return issue.keys.map((key) => ({ path: [...issue.path, key], code: issue.code, message: `unknown option "${key}"${didYouMean(key, known)}` }));
  });
}

// --- Internal helpers ---

interface SchemaDefinition {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
}

/** The keys an object schema accepts at `path` (through optional, default, array, union and pipe wrappers). */
function objectKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType[] = [schema];
  for (const part of [...path, undefined]) {
    const next: z.ZodType[] = [];
    for (const candidate of current.flatMap(unwrap)) {
      const definition = definitionOf(candidate);
      if (part === undefined) {
        if (definition.shape) next.push(candidate);
      } else if (typeof part === 'number') {
        if (definition.element) next.push(definition.element);
      } else if (definition.shape?.[String(part)]) {
        next.push(definition.shape[String(part)]);
      }
    }
    current = next;
  }
  return [...new Set(current.flatMap((candidate) => Object.keys(definitionOf(candidate).shape ?? {})))];
}

function unwrap(schema: z.ZodType): z.ZodType[] {
  const definition = definitionOf(schema);
  if (definition.innerType) return unwrap(definition.innerType);
  if (definition.type === 'pipe' && definition.in) return unwrap(definition.in);
  if (definition.options) return definition.options.flatMap(unwrap);
  if (definition.left && definition.right) return [...unwrap(definition.left), ...unwrap(definition.right)];
  return [schema];
}

function definitionOf(schema: z.ZodType): SchemaDefinition {
  // zod 4 keeps a schema's structure on `_zod.def`; a schema from another zod major has none (no hint then).
  return (schema as unknown as { _zod?: { def?: SchemaDefinition } })?._zod?.def ?? { type: 'unknown' };
}

function commonPrefixLength(a: string, b: string): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length] === b[length]) length++;
  return length;
}

/** Optimal string alignment distance: Levenshtein plus the swap of two neighbouring characters. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > Math.max(a.length, b.length) / 2 + 1) return Math.max(a.length, b.length);
  let previousRow: number[] = [];
  let row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const beforePrevious = previousRow;
    previousRow = row;
    row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, beforePrevious[j - 2] + 1);
      row.push(distance);
    }
  }
  return row[b.length];
}
