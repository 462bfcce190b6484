import type { Document, JsonValue } from '../document.ts';
import { RESERVED_FILTER_FIELDS, type FilterNode, type Primitive } from './types.ts';

/** The parts of a document a filter can see. */
export type FilterableDocument = Pick<Document, 'id' | 'sourceType' | 'sourceName' | 'metadata'>;

export type FilterPredicate = (document: FilterableDocument) => boolean;

/**
 * Compile a parsed filter into a predicate. Semantics, shared by every store:
 * - equality, `$in` and `$contains` on an array field match when any element matches;
 * - `$ne` and `$nin` match documents where the field is missing;
 * - comparisons match numbers only;
 * - a field "exists" when it is present, not null and not an empty array.
 */
export function compileFilter(node: FilterNode): FilterPredicate {
  switch (node.kind) {
    case 'and': {
      const parts = node.children.map(compileFilter);
      return (document) => parts.every((part) => part(document));
    }
    case 'or': {
      const parts = node.children.map(compileFilter);
      return (document) => parts.some((part) => part(document));
    }
    case 'not': {
      const inner = compileFilter(node.child);
      return (document) => !inner(document);
    }
    case 'eq': {
      const read = reader(node.path);
      const test = equals(node.value);
      return (document) => matchesAny(read(document), test);
    }
    case 'ne': {
      const read = reader(node.path);
      const test = equals(node.value);
      return (document) => !matchesAny(read(document), test);
    }
    case 'in': {
      const read = reader(node.path);
      const set = new Set<Primitive>(node.values);
      const test = (item: JsonValue) => set.has(item as Primitive);
      return (document) => matchesAny(read(document), test);
    }
    case 'nin': {
      const read = reader(node.path);
      const set = new Set<Primitive>(node.values);
      const test = (item: JsonValue) => set.has(item as Primitive);
      return (document) => !matchesAny(read(document), test);
    }
    case 'compare': {
      const read = reader(node.path);
      const compare = comparator(node.operator, node.value);
      const test = (item: JsonValue) => typeof item === 'number' && compare(item);
      return (document) => matchesAny(read(document), test);
    }
    case 'contains': {
      const read = reader(node.path);
      const needle = node.value;
      return (document) => {
        const value = read(document);
        if (Array.isArray(value)) return value.some((item) => item === needle);
        return typeof value === 'string' && typeof needle === 'string' && value.includes(needle);
      };
    }
    case 'exists': {
      const read = reader(node.path);
      return (document) => {
        const value = read(document);
        const present = value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
        return present === node.exists;
      };
    }
  }
}

/** Resolve a dotted path: reserved names read the document, everything else reads `metadata`. */
export function reader(path: string): (document: FilterableDocument) => JsonValue | undefined {
  if ((RESERVED_FILTER_FIELDS as readonly string[]).includes(path)) {
    const field = path as (typeof RESERVED_FILTER_FIELDS)[number];
    return (document) => document[field];
  }
  const parts = path.split('.');
  if (parts.length === 1) {
    // Own properties only: "constructor" or "toString" must not resolve to Object.prototype's.
    return (document) => (Object.hasOwn(document.metadata, path) ? document.metadata[path] : undefined);
  }
  return (document) => {
    let current: JsonValue | undefined = document.metadata;
    for (const part of parts) {
      if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
      if (!Object.hasOwn(current, part)) return undefined;
      current = (current as Record<string, JsonValue>)[part];
    }
    return current;
  };
}

function equals(expected: Primitive): (item: JsonValue) => boolean {
  return (item) => item === expected;
}

function matchesAny(value: JsonValue | undefined, test: (item: JsonValue) => boolean): boolean {
  if (value === undefined) return false;
  return Array.isArray(value) ? value.some(test) : test(value);
}

function comparator(operator: string, bound: number): (value: number) => boolean {
  switch (operator) {
    case '$gt':
      return (value) => value > bound;
    case '$gte':
      return (value) => value >= bound;
    case '$lt':
      return (value) => value < bound;
    default:
      return (value) => value <= bound;
  }
}
