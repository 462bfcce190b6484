import { FilterError } from '../../src/errors.ts';
import { RESERVED_FILTER_FIELDS, type FilterNode, type Primitive } from '../../src/filter/index.ts';

// The part of Qdrant's filter language this translation writes, declared here rather than imported from
// `@qdrant/js-client-rest`, so that an application that does not use Qdrant type-checks without the client installed.

/** A Qdrant filter (`must` / `should` / `must_not`), as sent in search, scroll, count and delete requests. */
export interface QdrantFilter {
  must?: QdrantCondition[];
  should?: QdrantCondition[];
  must_not?: QdrantCondition[];
}

/** One Qdrant condition: a field condition (`match`, `range`), `is_empty`, or a nested filter. */
export type QdrantCondition =
  | { key: string; match: { value: string | number | boolean } | { any: string[] | number[] } }
  | { key: string; range: { gt?: number; gte?: number; lt?: number; lte?: number } }
  | { is_empty: { key: string } }
  | QdrantFilter;

/** Payload key under which the Qdrant store keeps a document's metadata. */
export const METADATA_PAYLOAD_KEY = 'metadata';

const COMPONENT = 'qdrant-store';

const RANGE_BOUNDS = { $gt: 'gt', $gte: 'gte', $lt: 'lt', $lte: 'lte' } as const;

/**
 * Translate a parsed filter (see `parseFilter`) into a Qdrant filter that selects exactly the documents
 * `compileFilter` selects, given the payload layout of the Qdrant store (`id`, `sourceType`, `sourceName` at
 * the top of the payload, everything else under `metadata`):
 *
 * | ours | Qdrant |
 * |---|---|
 * | `$and` / `$or` / `$not` | `must` / `should` / `must_not` |
 * | `$eq` string, boolean, safe integer | `match.value` (matches any element of an array, like ours) |
 * | `$eq` other number | `range` with `gte` = `lte` (`match.value` takes no fractions) |
 * | `$in` | `match.any` per type (strings, integers), single matches for the rest, under `should` |
 * | `$ne` / `$nin` | `must_not` around `$eq` / `$in`: a missing field matches, as ours |
 * | `$gt` `$gte` `$lt` `$lte` | one `range` each (merging two would demand one array element satisfy both) |
 * | `$exists: false` / `true` | `is_empty` / `must_not: is_empty` (missing, `null` or `[]`) |
 *
 * `match.except` is not used: on an array it matches when *some* element is outside the list, where `$nin`
 * wants *no* element inside it.
 *
 * `$contains` is rejected: Qdrant cannot tell an array element from a scalar, and its only substring-like test
 * (`match.text`) splits the text into tokens once a full-text index exists.
 *
 * @throws FilterError for `$contains` and for a metadata key Qdrant cannot address (one holding `"` or `\`).
 */
export function toQdrantFilter(node: FilterNode): QdrantFilter {
  const condition = translate(node);
  return isFilter(condition) ? condition : { must: [condition] };
}

/**
 * The Qdrant payload key of one of our filter paths: reserved fields stay at the top of the payload, every
 * other path goes under `metadata`, each segment quoted when Qdrant's key grammar needs it.
 *
 * @throws FilterError when a segment holds `"` or `\`, which Qdrant's key grammar cannot express.
 */
export function qdrantPayloadKey(path: string): string {
  if ((RESERVED_FILTER_FIELDS as readonly string[]).includes(path)) return path;
  return [METADATA_PAYLOAD_KEY, ...path.split('.').map((segment) => quoteSegment(segment, path))].join('.');
}

// --- Internal helpers ---

function translate(node: FilterNode): QdrantCondition {
  switch (node.kind) {
    case 'and':
      return { must: node.children.map(translate) };
    case 'or':
      return { should: node.children.map(translate) };
    case 'not':
      return { must_not: [translate(node.child)] };
    case 'eq':
      return equals(qdrantPayloadKey(node.path), node.value);
    case 'ne':
      return { must_not: [equals(qdrantPayloadKey(node.path), node.value)] };
    case 'in':
      return oneOf(qdrantPayloadKey(node.path), node.values);
    case 'nin':
      return { must_not: [oneOf(qdrantPayloadKey(node.path), node.values)] };
    case 'compare':
      return { key: qdrantPayloadKey(node.path), range: { [RANGE_BOUNDS[node.operator]]: node.value } };
    case 'exists': {
      const isEmpty: QdrantCondition = { is_empty: { key: qdrantPayloadKey(node.path) } };
      return node.exists ? { must_not: [isEmpty] } : isEmpty;
    }
    case 'contains':
      throw new FilterError('The Qdrant store cannot express $contains exactly', {
        path: `${node.path}.$contains`,
        component: COMPONENT,
        fix:
          'Qdrant cannot tell an array element from a single value, and its text match splits text into tokens once a full-text index exists, so neither array membership nor substring can be translated without changing results. ' +
          `For array membership use equality, which matches any element: { "${node.path}": ${JSON.stringify(node.value)} } (or $in); for words inside text use the hybrid BM25 search.`,
      });
  }
}

function equals(key: string, value: Primitive): QdrantCondition {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return { key, range: { gte: value, lte: value } };
  return { key, match: { value } };
}

function oneOf(key: string, values: Primitive[]): QdrantCondition {
  const unique = [...new Set(values)];
  const strings = unique.filter((value): value is string => typeof value === 'string');
  const integers = unique.filter((value): value is number => typeof value === 'number' && Number.isSafeInteger(value));
  const conditions: QdrantCondition[] = [];
  // match.any takes one list of strings or one list of integers, never a mix and never booleans or fractions.
  if (strings.length > 0) conditions.push({ key, match: { any: strings } });
  if (integers.length > 0) conditions.push({ key, match: { any: integers } });
  for (const value of unique) {
    if (typeof value === 'boolean' || (typeof value === 'number' && !Number.isSafeInteger(value))) conditions.push(equals(key, value));
  }
  return conditions.length === 1 ? conditions[0] : { should: conditions };
}

function quoteSegment(segment: string, path: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(segment)) return segment;
  if (/["\\]/.test(segment)) {
    throw new FilterError(`The key "${segment}" holds a quote or a backslash, which Qdrant's key syntax cannot express`, {
      path,
      component: COMPONENT,
      fix: 'Rename the metadata key, or filter with the embedded store.',
    });
  }
  return `"${segment}"`;
}

function isFilter(condition: QdrantCondition): condition is QdrantFilter {
  return 'must' in condition || 'should' in condition || 'must_not' in condition;
}
