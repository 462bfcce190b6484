/**
 * The metadata filter language (SPEC §4), Mongo-style:
 *
 * ```ts
 * { lang: 'en' }                                   // equality
 * { year: { $gte: 2020, $lt: 2024 } }              // comparison (numbers)
 * { tags: { $contains: 'billing' } }               // array membership, or substring of a string
 * { $or: [{ 'author.name': 'Ada' }, { draft: { $exists: false } }] }
 * ```
 *
 * Paths are dotted and resolve inside `metadata`, except the reserved top-level fields `id`, `sourceType`
 * and `sourceName`, which refer to the document itself.
 */
export type Filter = { [key: string]: unknown };

export type Primitive = string | number | boolean;

export type ComparisonOperator = '$gt' | '$gte' | '$lt' | '$lte';

/** A filter after parsing: validated once, then evaluated or translated by each store. */
export type FilterNode =
  | { kind: 'and'; children: FilterNode[] }
  | { kind: 'or'; children: FilterNode[] }
  | { kind: 'not'; child: FilterNode }
  | { kind: 'eq'; path: string; value: Primitive }
  | { kind: 'ne'; path: string; value: Primitive }
  | { kind: 'compare'; path: string; operator: ComparisonOperator; value: number }
  | { kind: 'in'; path: string; values: Primitive[] }
  | { kind: 'nin'; path: string; values: Primitive[] }
  | { kind: 'contains'; path: string; value: Primitive }
  | { kind: 'exists'; path: string; exists: boolean };

/** Document fields a filter path may name directly; every other path resolves inside `metadata`. */
export const RESERVED_FILTER_FIELDS = ['id', 'sourceType', 'sourceName'] as const;
