import { FilterError } from '../../src/errors.ts';
import { RESERVED_FILTER_FIELDS, type FilterNode, type Primitive } from '../../src/filter/index.ts';

/** Columns of the pgvector store's table that reserved filter fields name; every other path reads `metadata`. */
const RESERVED_COLUMNS: Record<(typeof RESERVED_FILTER_FIELDS)[number], string> = { id: 'id', sourceType: 'source_type', sourceName: 'source_name' };

const COMPARISON_SQL = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

const COMPONENT = 'pgvector-store';

/** Element types of the small array parameters that carry a filter's scalar values (see `SqlParameters.element`). */
export type PooledType = 'text' | 'jsonb' | 'numeric';

/** Most parameters one statement binds: the wire protocol counts them in 16 bits. */
export const MAX_BIND_PARAMETERS = 65_535;

/**
 * Scalar values per array parameter. The planner turns every reference to a parameter into a constant holding
 * a copy of the whole parameter, so one large array referenced once per value would cost its size times the
 * number of values (gigabytes for a 10,000-condition filter); a small array costs a small copy per value, and
 * sixteen values share one parameter.
 */
const POOL_SIZE = 16;

/**
 * The positional parameters of one SQL statement. Every value a filter carries goes through `add` or
 * `element`, so no value, key or path is ever written into the SQL text.
 *
 * A statement binds at most 65,535 parameters (the wire protocol counts them in 16 bits, and a larger count
 * wraps), while a filter inside the documented limits may hold more values than that: 10,000 conditions,
 * each with a dotted path of any length. A filter's scalar values (path keys, compared values) therefore
 * travel as elements of small array parameters, 16 to a parameter, and the same value of the same type once.
 */
export class SqlParameters {
  readonly values: unknown[] = [];
  readonly #pools = new Map<PooledType, { values: unknown[]; placeholder: string }>();
  readonly #placed = new Map<PooledType, Map<unknown, string>>();

  /** Append a value and return its placeholder (`$1`, `$2`, …), cast when `cast` is given (`$3::jsonb`). */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }

  /** A scalar value carried as one element of a small array parameter of its `type`: `(($2::jsonb[])[7])`. */
  element(value: string, type: PooledType): string {
    let placed = this.#placed.get(type);
    if (placed === undefined) this.#placed.set(type, (placed = new Map()));
    const known = placed.get(value);
    if (known !== undefined) return known;
    let pool = this.#pools.get(type);
    if (pool === undefined || pool.values.length === POOL_SIZE) {
      // The array is bound as it is when the statement runs: elements added later travel with it.
      const values: unknown[] = [];
      pool = { values, placeholder: this.add(values, `${type}[]`) };
      this.#pools.set(type, pool);
    }
    pool.values.push(value);
    const reference = `((${pool.placeholder})[${pool.values.length}])`;
    placed.set(value, reference);
    return reference;
  }
}

/**
 * Translate a parsed filter (see `parseFilter`) into a boolean SQL expression over the store's table that
 * selects exactly the rows `compileFilter` selects. Values, keys and paths become parameters in `parameters`;
 * the returned text holds only placeholders, column names and operators.
 *
 * | ours | SQL (V is `metadata -> $key1 -> $key2 …`, NULL when missing) |
 * |---|---|
 * | `$eq` (and implicit equality) | `V @> $value::jsonb`: a scalar equal to the value, or an array with such an element |
 * | `$ne` | `NOT (… $eq …)`: a missing field matches |
 * | `$in` / `$nin` | `V @> ANY($values::jsonb[])` / its negation |
 * | `$gt` `$gte` `$lt` `$lte` | numbers only, compared as `numeric`: `V::numeric > $n`, or any number element of an array |
 * | `$contains` | an array element equal to the value (`V @> jsonb_build_array($value)`), or a substring of a string (`strpos`) |
 * | `$exists` | `V` not NULL, not JSON `null`, not `[]` |
 * | `$and` `$or` `$not` | `AND` `OR` `NOT`, every leaf made two-valued with `COALESCE(…, false)` |
 * | `id`, `sourceType`, `sourceName` | the text columns `id`, `source_type`, `source_name` |
 *
 * Keys are looked up with `->` and a text operand, which never indexes into an array, as our paths never do.
 *
 * @throws FilterError for a string Postgres cannot hold (a NUL character or a lone UTF-16 surrogate): no stored
 * value can hold one either, and a silently different match is never returned.
 */
export function toSqlCondition(node: FilterNode, parameters: SqlParameters): string {
  switch (node.kind) {
    case 'and':
      return `(${node.children.map((child) => toSqlCondition(child, parameters)).join(' AND ')})`;
    case 'or':
      return `(${node.children.map((child) => toSqlCondition(child, parameters)).join(' OR ')})`;
    case 'not':
      return `(NOT ${toSqlCondition(node.child, parameters)})`;
    case 'eq':
      return equals(node.path, node.value, parameters);
    case 'ne':
      return `(NOT ${equals(node.path, node.value, parameters)})`;
    case 'in':
      return oneOf(node.path, node.values, parameters);
    case 'nin':
      return `(NOT ${oneOf(node.path, node.values, parameters)})`;
    case 'compare': {
      if (isReserved(node.path)) return 'false';
      const value = metadataValue(node.path, parameters);
      const bound = parameters.element(String(node.value), 'numeric');
      const operator = COMPARISON_SQL[node.operator];
      // CASE keeps jsonb_array_elements away from scalars and the cast away from anything but numbers (AND has no evaluation order).
      return (
        `(CASE jsonb_typeof(${value}) WHEN 'number' THEN (${value})::numeric ${operator} ${bound} ` +
        `WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(${value}) AS element(value) ` +
        `WHERE CASE WHEN jsonb_typeof(element.value) = 'number' THEN element.value::numeric ${operator} ${bound} ELSE false END) ELSE false END)`
      );
    }
    case 'contains': {
      assertExpressible(node.value, `${node.path}.$contains`);
      if (isReserved(node.path)) {
        return typeof node.value === 'string' ? `(strpos(${reservedColumn(node.path)}, ${parameters.element(node.value, 'text')}) > 0)` : 'false';
      }
      const value = metadataValue(node.path, parameters);
      const needle = parameters.element(JSON.stringify(node.value), 'jsonb');
      const substring = typeof node.value === 'string' ? `WHEN 'string' THEN strpos(${value} #>> '{}', ${parameters.element(node.value, 'text')}) > 0 ` : '';
      return `(CASE jsonb_typeof(${value}) WHEN 'array' THEN ${value} @> jsonb_build_array(${needle}) ${substring}ELSE false END)`;
    }
    case 'exists': {
      // Reserved fields are strings on every document: always present.
      if (isReserved(node.path)) return node.exists ? 'true' : 'false';
      const value = metadataValue(node.path, parameters);
      const present = `COALESCE(jsonb_typeof(${value}) <> 'null' AND ${value} <> '[]'::jsonb, false)`;
      return node.exists ? `(${present})` : `(NOT ${present})`;
    }
  }
}

// --- Internal helpers ---

function equals(path: string, value: Primitive, parameters: SqlParameters): string {
  assertExpressible(value, path);
  if (isReserved(path)) return typeof value === 'string' ? `(${reservedColumn(path)} = ${parameters.element(value, 'text')})` : 'false';
  // jsonb containment of a primitive: equal to a scalar, or equal to a top-level element of an array.
  return `COALESCE(${metadataValue(path, parameters)} @> ${parameters.element(JSON.stringify(value), 'jsonb')}, false)`;
}

function oneOf(path: string, values: Primitive[], parameters: SqlParameters): string {
  for (const value of values) assertExpressible(value, path);
  if (isReserved(path)) {
    const strings = values.filter((value): value is string => typeof value === 'string');
    return strings.length === 0 ? 'false' : `(${reservedColumn(path)} = ANY(${parameters.add(strings, 'text[]')}))`;
  }
  const candidates = parameters.add(
    values.map((value) => JSON.stringify(value)),
    'jsonb[]',
  );
  return `COALESCE(${metadataValue(path, parameters)} @> ANY(${candidates}), false)`;
}

/** `metadata -> $a -> $b …` for a dotted path; each key a text parameter. */
function metadataValue(path: string, parameters: SqlParameters): string {
  const segments = path.split('.');
  for (const segment of segments) assertExpressible(segment, path);
  return `(metadata${segments.map((segment) => ` -> ${parameters.element(segment, 'text')}`).join('')})`;
}

function reservedColumn(path: string): string {
  return RESERVED_COLUMNS[path as keyof typeof RESERVED_COLUMNS];
}

function isReserved(path: string): boolean {
  return (RESERVED_FILTER_FIELDS as readonly string[]).includes(path);
}

/** Postgres text and jsonb hold neither NUL nor unpaired surrogates; such a value cannot be compared exactly. */
function assertExpressible(value: Primitive, path: string): void {
  if (typeof value !== 'string' || isPostgresText(value)) return;
  throw new FilterError('The pgvector store cannot express a string holding a NUL character or an unpaired UTF-16 surrogate', {
    path,
    component: COMPONENT,
    fix: 'Postgres text cannot hold such characters (so no stored document holds them either); remove them from the filter.',
  });
}

/** True when Postgres can store `text` unchanged: no NUL, no lone surrogate. */
export function isPostgresText(text: string): boolean {
  return !/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}
