/**
 * A loopback Qdrant: the REST calls the Qdrant store makes, with Qdrant's documented request and response
 * formats, its filter semantics and its error answers. Written from Qdrant's documentation and its
 * condition checker, independently of `stores/qdrant/qdrant-filter.ts`, so the filter-equivalence test is not
 * circular. Anything it does not implement is answered 400 "not implemented by the loopback server", so a
 * request we did not plan for fails loudly instead of being half-understood.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/collections/docs/points`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface InjectedResponse {
  status: number;
  /** JSON body (objects) or plain text (strings). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer (until the server closes): for time-limit tests. */
  hang?: boolean;
  /** Answer this raw text with a JSON content type: for malformed-response tests. */
  raw?: string;
}

export interface LoopbackPoint {
  id: string | number;
  /** As Qdrant keeps it: float32, normalised for Cosine. */
  vector: number[];
  payload: Record<string, unknown>;
  version: number;
}

export interface LoopbackCollection {
  vectors: { size: number; distance: string } | Record<string, unknown>;
  points: Map<string, LoopbackPoint>;
  payloadSchema: Record<string, { data_type: string }>;
}

export interface QdrantLoopbackServer {
  url: string;
  requests: RecordedRequest[];
  collections: Map<string, LoopbackCollection>;
  /** Answer the next request matching `method` and `path` with `response` instead of handling it. */
  failNext(matcher: { method?: string; path: string | RegExp }, response: InjectedResponse): void;
  close(): Promise<void>;
}

class QdrantHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DISTANCES = new Set(['Cosine', 'Dot', 'Euclid', 'Manhattan']);
const INDEX_TYPES = new Set(['keyword', 'integer', 'float', 'geo', 'text', 'bool', 'datetime', 'uuid']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FLOAT32_EPSILON = 1.1920929e-7;

/** Start a loopback Qdrant on 127.0.0.1 and a free port. With `apiKey`, requests must carry it. */
export async function startQdrantServer(options: { apiKey?: string } = {}): Promise<QdrantLoopbackServer> {
  const requests: RecordedRequest[] = [];
  const collections = new Map<string, LoopbackCollection>();
  const injected: { matcher: { method?: string; path: string | RegExp }; response: InjectedResponse }[] = [];
  let version = 0;

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const text = await readBody(request);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      return sendJson(response, 400, { status: { error: `Format error in JSON body: ${(error as Error).message}` }, time: 0 });
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body,
    };
    requests.push(recorded);
    const injectedIndex = injected.findIndex(
      ({ matcher }) =>
        (!matcher.method || matcher.method === recorded.method) &&
        (typeof matcher.path === 'string' ? matcher.path === recorded.path : matcher.path.test(recorded.path)),
    );
    if (injectedIndex >= 0) {
      const [{ response: planned }] = injected.splice(injectedIndex, 1);
      if (planned.hang) return;
      if (planned.raw !== undefined) {
        response.writeHead(planned.status, { 'content-type': 'application/json', ...planned.headers });
        return response.end(planned.raw);
      }
      if (typeof planned.body === 'string') {
        response.writeHead(planned.status, { 'content-type': 'text/plain', ...planned.headers });
        return response.end(planned.body);
      }
      return sendJson(response, planned.status, planned.body ?? {}, planned.headers);
    }
    if (options.apiKey && request.headers['api-key'] !== options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      response.writeHead(401, { 'content-type': 'text/plain' });
      return response.end('Must provide an API key or an Authorization bearer token');
    }
    // The root answers without the usual envelope, as Qdrant's does.
    if (recorded.method === 'GET' && recorded.path === '/') return sendJson(response, 200, { title: 'qdrant - vector search engine', version: '1.18.0' });
    try {
      const result = route(recorded);
      sendJson(response, 200, { result, status: 'ok', time: 0.000_1 });
    } catch (error) {
      if (error instanceof QdrantHttpError) return sendJson(response, error.status, { status: { error: error.message }, time: 0.000_1 });
      sendJson(response, 500, { status: { error: `Service internal error: ${(error as Error).message}` }, time: 0 });
    }
  });

  function route(request: RecordedRequest): unknown {
    const { method, path } = request;
    if (method === 'GET' && path === '/collections') return { collections: [...collections.keys()].map((name) => ({ name })) };
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!match) throw new QdrantHttpError(404, `Not found: ${path}`);
    const name = decodeURIComponent(match[1]);
    const rest = match[2] ?? '';
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (rest === '/exists' && method === 'GET') return { exists: collections.has(name) };
    if (rest === '' && method === 'PUT') return createCollection(name, body);
    const collection = collections.get(name);
    if (!collection) throw new QdrantHttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    switch (`${method} ${rest}`) {
      case 'GET ':
        return collectionInfo(collection);
      case 'DELETE ':
        return collections.delete(name);
      case 'PUT /index':
        return createIndex(collection, body, request.query);
      case 'PUT /points':
        return upsert(collection, body, request.query);
      case 'POST /points':
        return retrieve(collection, body);
      case 'POST /points/query':
        return { points: nearest(collection, body, body.query) };
      case 'POST /points/search':
        return nearest(collection, { with_payload: false, ...body }, body.vector);
      case 'POST /points/scroll':
        return scroll(collection, body);
      case 'POST /points/count':
        return { count: [...collection.points.values()].filter((point) => matchesFilter(body.filter, point.payload, point.id)).length };
      case 'POST /points/delete':
        return deletePoints(collection, body, request.query);
      default:
        throw new QdrantHttpError(400, `${method} ${path} is not implemented by the loopback server`);
    }
  }

  function createCollection(name: string, body: Record<string, unknown>): boolean {
    if (collections.has(name)) throw new QdrantHttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
    const vectors = body.vectors as Record<string, unknown> | undefined;
    if (!vectors || typeof vectors !== 'object') throw new QdrantHttpError(400, 'Format error in JSON body: missing field `vectors`');
    if ('size' in vectors) {
      if (!Number.isInteger(vectors.size) || (vectors.size as number) < 1)
        throw new QdrantHttpError(422, 'Validation error in JSON body: [vectors.size: value 0 invalid, must be 1 or larger]');
      if (!DISTANCES.has(vectors.distance as string))
        throw new QdrantHttpError(400, `Format error in JSON body: unknown variant \`${String(vectors.distance)}\``);
    }
    collections.set(name, { vectors: vectors as LoopbackCollection['vectors'], points: new Map(), payloadSchema: {} });
    return true;
  }

  function collectionInfo(collection: LoopbackCollection): unknown {
    const payloadSchema = Object.fromEntries(
      Object.entries(collection.payloadSchema).map(([key, schema]) => [
        key,
        { ...schema, points: [...collection.points.values()].filter((point) => getValues(point.payload, key).length > 0).length },
      ]),
    );
    return {
      status: 'green',
      optimizer_status: 'ok',
      indexed_vectors_count: 0,
      points_count: collection.points.size,
      segments_count: 1,
      config: {
        params: { vectors: collection.vectors, shard_number: 1, replication_factor: 1, write_consistency_factor: 1, on_disk_payload: true },
        hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false },
        optimizer_config: { deleted_threshold: 0.2, vacuum_min_vector_number: 1000, default_segment_number: 0, flush_interval_sec: 5 },
        wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
        quantization_config: null,
      },
      payload_schema: payloadSchema,
    };
  }

  function createIndex(collection: LoopbackCollection, body: Record<string, unknown>, query: Record<string, string>): unknown {
    const field = body.field_name;
    const schema = typeof body.field_schema === 'string' ? body.field_schema : (body.field_schema as { type?: string } | undefined)?.type;
    if (typeof field !== 'string') throw new QdrantHttpError(400, 'Format error in JSON body: missing field `field_name`');
    parseKey(field);
    if (!schema || !INDEX_TYPES.has(schema)) throw new QdrantHttpError(400, `Format error in JSON body: unknown field schema \`${String(schema)}\``);
    collection.payloadSchema[field] = { data_type: schema };
    return updateResult(query);
  }

  function upsert(collection: LoopbackCollection, body: Record<string, unknown>, query: Record<string, string>): unknown {
    const vectors = collection.vectors as { size?: unknown; distance?: unknown };
    if (typeof vectors.size !== 'number') throw new QdrantHttpError(400, 'Wrong input: Not existing vector name error: ');
    let points: { id: unknown; vector: unknown; payload?: unknown }[];
    if (Array.isArray(body.points)) points = body.points as typeof points;
    else if (body.batch && typeof body.batch === 'object') {
      const batch = body.batch as { ids: unknown[]; vectors: unknown[]; payloads?: unknown[] };
      points = batch.ids.map((id, index) => ({ id, vector: batch.vectors[index], payload: batch.payloads?.[index] }));
    } else throw new QdrantHttpError(400, 'Format error in JSON body: data did not match any variant of untagged enum PointInsertOperations');
    // Validate the whole request first: Qdrant rejects a bad request without applying part of it.
    const prepared = points.map((point) => {
      const id = pointId(point.id);
      const vector = point.vector;
      if (!Array.isArray(vector) || vector.some((value) => typeof value !== 'number'))
        throw new QdrantHttpError(400, 'Format error in JSON body: data did not match any variant of untagged enum VectorStruct');
      if (vector.length !== vectors.size)
        throw new QdrantHttpError(400, `Wrong input: Vector dimension error: expected dim: ${vectors.size}, got ${vector.length}`);
      const payload = point.payload ?? {};
      if (typeof payload !== 'object' || Array.isArray(payload)) throw new QdrantHttpError(400, 'Format error in JSON body: payload must be an object');
      return { id, vector: preprocess(vector as number[], vectors.distance as string), payload: payload as Record<string, unknown> };
    });
    version++;
    for (const point of prepared) collection.points.set(String(point.id), { ...point, version });
    return updateResult(query);
  }

  function retrieve(collection: LoopbackCollection, body: Record<string, unknown>): unknown {
    if (!Array.isArray(body.ids)) throw new QdrantHttpError(400, 'Format error in JSON body: missing field `ids`');
    const wanted = new Set(body.ids.map((id) => String(pointId(id))));
    // Qdrant does not promise the order asked for; answering in id order makes callers prove they reorder.
    return sortedPoints(collection)
      .filter((point) => wanted.has(String(point.id)))
      .map((point) => present(point, body.with_payload ?? true, body.with_vector ?? false));
  }

  function nearest(collection: LoopbackCollection, body: Record<string, unknown>, query: unknown): unknown[] {
    const vectors = collection.vectors as { size?: unknown; distance?: unknown };
    const vector = (query && typeof query === 'object' && !Array.isArray(query) ? (query as { nearest?: unknown }).nearest : query) as unknown;
    if (!Array.isArray(vector)) throw new QdrantHttpError(400, 'a query without a plain vector is not implemented by the loopback server');
    if (vector.length !== vectors.size)
      throw new QdrantHttpError(400, `Wrong input: Vector dimension error: expected dim: ${String(vectors.size)}, got ${vector.length}`);
    const limit = body.limit === undefined ? 10 : (body.limit as number);
    const offset = (body.offset as number | undefined) ?? 0;
    const prepared = preprocess(vector as number[], vectors.distance as string);
    const threshold = body.score_threshold as number | undefined;
    return [...collection.points.values()]
      .filter((point) => matchesFilter(body.filter, point.payload, point.id))
      .map((point) => ({ point, score: Math.fround(point.vector.reduce((sum, value, index) => sum + value * prepared[index], 0)) }))
      .filter(({ score }) => threshold === undefined || score >= threshold)
      .sort((left, right) => right.score - left.score || compareIds(left.point.id, right.point.id))
      .slice(offset, offset + limit)
      .map(({ point, score }) => ({ ...present(point, body.with_payload ?? false, body.with_vector ?? false), version: point.version, score }));
  }

  function scroll(collection: LoopbackCollection, body: Record<string, unknown>): unknown {
    if (body.order_by !== undefined && body.order_by !== null) throw new QdrantHttpError(400, 'order_by is not implemented by the loopback server');
    const limit = (body.limit as number | undefined) ?? 10;
    const start = body.offset === undefined || body.offset === null ? undefined : pointId(body.offset);
    const matching = sortedPoints(collection).filter(
      (point) => (start === undefined || compareIds(point.id, start) >= 0) && matchesFilter(body.filter, point.payload, point.id),
    );
    return {
      points: matching.slice(0, limit).map((point) => present(point, body.with_payload ?? true, body.with_vector ?? false)),
      next_page_offset: matching[limit]?.id ?? null,
    };
  }

  function deletePoints(collection: LoopbackCollection, body: Record<string, unknown>, query: Record<string, string>): unknown {
    if (Array.isArray(body.points)) {
      for (const id of body.points) collection.points.delete(String(pointId(id)));
    } else if (body.filter !== undefined) {
      for (const point of [...collection.points.values()]) if (matchesFilter(body.filter, point.payload, point.id)) collection.points.delete(String(point.id));
    } else throw new QdrantHttpError(400, 'Format error in JSON body: data did not match any variant of untagged enum PointsSelector');
    version++;
    return updateResult(query);
  }

  function updateResult(query: Record<string, string>): unknown {
    return { operation_id: version, status: query.wait === 'true' ? 'completed' : 'acknowledged' };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    collections,
    failNext(matcher, response) {
      injected.push({ matcher, response });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// --- Qdrant's filter semantics ---

type KeyItem = { key: string } | { index: number } | { wildcard: true };

/**
 * Whether a point passes a Qdrant filter: every `must` holds, at least one `should` holds (when `should` is
 * given, even empty), no `must_not` holds. Each clause takes one condition or a list.
 */
export function matchesFilter(filter: unknown, payload: Record<string, unknown>, id: string | number = 0): boolean {
  if (filter === undefined || filter === null) return true;
  if (typeof filter !== 'object' || Array.isArray(filter)) throw new QdrantHttpError(400, 'Format error in JSON body: filter must be an object');
  const { must, should, must_not: mustNot, min_should: minShould, ...unknown } = filter as Record<string, unknown>;
  if (Object.keys(unknown).length > 0) throw new QdrantHttpError(400, `Format error in JSON body: unknown field \`${Object.keys(unknown)[0]}\``);
  if (minShould !== undefined && minShould !== null) throw new QdrantHttpError(400, 'min_should is not implemented by the loopback server');
  const list = (clause: unknown) => (clause === undefined || clause === null ? undefined : Array.isArray(clause) ? clause : [clause]);
  const check = (condition: unknown) => matchesCondition(condition, payload, id);
  const shouldList = list(should);
  const mustList = list(must);
  const mustNotList = list(mustNot);
  return (
    (shouldList === undefined || shouldList.some(check)) &&
    (mustList === undefined || mustList.every(check)) &&
    (mustNotList === undefined || !mustNotList.some(check))
  );
}

function matchesCondition(condition: unknown, payload: Record<string, unknown>, id: string | number): boolean {
  if (!condition || typeof condition !== 'object') throw new QdrantHttpError(400, 'Format error in JSON body: a condition must be an object');
  const record = condition as Record<string, unknown>;
  if ('must' in record || 'should' in record || 'must_not' in record || 'min_should' in record) return matchesFilter(record, payload, id);
  if ('is_empty' in record) return getValues(payload, keyOf(record.is_empty)).every((value) => value === null || (Array.isArray(value) && value.length === 0));
  if ('is_null' in record) return getValues(payload, keyOf(record.is_null)).some((value) => value === null);
  if ('has_id' in record) return (record.has_id as unknown[]).some((wanted) => String(pointId(wanted)) === String(id));
  if ('nested' in record) {
    const nested = record.nested as { key: string; filter: unknown };
    const key = nested.key.endsWith('[]') ? nested.key : `${nested.key}[]`;
    return getValues(payload, key).some(
      (value) => value !== null && typeof value === 'object' && !Array.isArray(value) && matchesFilter(nested.filter, value as Record<string, unknown>, id),
    );
  }
  if (typeof record.key === 'string') return matchesField(record, payload);
  throw new QdrantHttpError(400, 'Format error in JSON body: data did not match any variant of untagged enum Condition');
}

function matchesField(condition: Record<string, unknown>, payload: Record<string, unknown>): boolean {
  const { key, match, range, values_count: valuesCount, ...other } = condition;
  const extra = Object.entries(other).filter(([, value]) => value !== null && value !== undefined);
  if (extra.length > 0) throw new QdrantHttpError(400, `${extra[0][0]} is not implemented by the loopback server`);
  if (!match && !range && !valuesCount) throw new QdrantHttpError(422, 'Validation error in JSON body: At least one field condition must be specified');
  const checkMatch = match ? matcher(match) : undefined;
  const checkRange = range ? rangeChecker(range) : undefined;
  // One stored value "matches" when any of the given clauses does; an array matches when any element does.
  const checkOne = (value: unknown) => (checkMatch?.(value) ?? false) || (checkRange?.(value) ?? false);
  return getValues(payload, key as string).some((value) => {
    if (valuesCount) return countMatches(valuesCount as Record<string, number>, Array.isArray(value) ? value.length : 1);
    return Array.isArray(value) ? value.some(checkOne) : checkOne(value);
  });
}

function matcher(match: unknown): (value: unknown) => boolean {
  const record = match as Record<string, unknown>;
  if ('value' in record) {
    const wanted = record.value;
    if (typeof wanted === 'string' || typeof wanted === 'boolean') return (value) => value === wanted;
    if (isInteger64(wanted)) return (value) => isInteger64(value) && value === wanted;
    throw new QdrantHttpError(400, 'Format error in JSON body: data did not match any variant of untagged enum ValueVariants');
  }
  if ('any' in record || 'except' in record) {
    const list = (record.any ?? record.except) as unknown[];
    const strings = Array.isArray(list) && list.every((item) => typeof item === 'string');
    const integers = Array.isArray(list) && list.every((item) => isInteger64(item));
    if (!strings && !integers) throw new QdrantHttpError(400, 'Format error in JSON body: data did not match any variant of untagged enum AnyVariants');
    const set = new Set<unknown>(list);
    if ('any' in record) return (value) => (strings ? typeof value === 'string' : isInteger64(value)) && set.has(value);
    // Qdrant's except is true for every value of another kind, except null.
    return (value) => {
      if (value === null) return false;
      if (strings && typeof value === 'string') return !set.has(value);
      if (integers && typeof value === 'number') return !isInteger64(value) || !set.has(value);
      return true;
    };
  }
  if ('text' in record) {
    // Without a full-text index Qdrant matches a substring; the loopback server has no full-text index.
    const text = record.text as string;
    return (value) => typeof value === 'string' && value.includes(text);
  }
  throw new QdrantHttpError(400, `match ${Object.keys(record).join(',')} is not implemented by the loopback server`);
}

function rangeChecker(range: unknown): (value: unknown) => boolean {
  const bounds = range as Record<string, unknown>;
  for (const [name, bound] of Object.entries(bounds)) {
    if (!['gt', 'gte', 'lt', 'lte'].includes(name)) throw new QdrantHttpError(400, `Format error in JSON body: unknown field \`${name}\``);
    if (bound !== null && typeof bound !== 'number') throw new QdrantHttpError(400, 'datetime ranges are not implemented by the loopback server');
  }
  const { gt, gte, lt, lte } = bounds as Record<string, number | null | undefined>;
  return (value) =>
    typeof value === 'number' && (gt == null || value > gt) && (gte == null || value >= gte) && (lt == null || value < lt) && (lte == null || value <= lte);
}

function countMatches(bounds: Record<string, number>, count: number): boolean {
  return (
    (bounds.gt == null || count > bounds.gt) &&
    (bounds.gte == null || count >= bounds.gte) &&
    (bounds.lt == null || count < bounds.lt) &&
    (bounds.lte == null || count <= bounds.lte)
  );
}

/** The values a Qdrant key selects: objects are entered by key, arrays only through `[]` or `[n]`. */
function getValues(payload: Record<string, unknown>, key: string): unknown[] {
  const [first, ...rest] = parseKey(key);
  if (!('key' in first) || !Object.hasOwn(payload, first.key)) return [];
  let current: unknown[] = [payload[first.key]];
  for (const item of rest) {
    const next: unknown[] = [];
    for (const value of current) {
      if ('key' in item) {
        if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, item.key))
          next.push((value as Record<string, unknown>)[item.key]);
      } else if ('index' in item) {
        if (Array.isArray(value) && item.index < value.length) next.push(value[item.index]);
      } else if (Array.isArray(value)) next.push(...value);
    }
    current = next;
  }
  return current;
}

/** Qdrant's key grammar: plain segments of letters, digits, `_` and `-`, or `"quoted"` ones; `[n]` and `[]`. */
function parseKey(key: string): KeyItem[] {
  const items: KeyItem[] = [];
  const plainOrQuoted = /^(?:([\p{L}\p{N}_-]+)|"([^"\\]*)")/u;
  let rest = key;
  let first = true;
  while (rest.length > 0) {
    if (!first && rest.startsWith('[')) {
      const bracket = /^\[(\d*)\]/.exec(rest);
      if (!bracket) break;
      items.push(bracket[1] === '' ? { wildcard: true } : { index: Number(bracket[1]) });
      rest = rest.slice(bracket[0].length);
      continue;
    }
    if (!first) {
      if (!rest.startsWith('.')) break;
      rest = rest.slice(1);
    }
    const segment = plainOrQuoted.exec(rest);
    if (!segment) break;
    items.push({ key: segment[1] ?? segment[2] });
    rest = rest.slice(segment[0].length);
    first = false;
  }
  if (rest.length > 0 || items.length === 0) throw new QdrantHttpError(400, `Format error in JSON body: Invalid payload key: ${JSON.stringify(key)}`);
  return items;
}

// --- Internal helpers ---

function keyOf(field: unknown): string {
  const key = (field as { key?: unknown } | null)?.key;
  if (typeof key !== 'string') throw new QdrantHttpError(400, 'Format error in JSON body: missing field `key`');
  return key;
}

/** serde_json's `as_i64`: integers in the signed 64-bit range (JSON numbers with a fraction are floats). */
function isInteger64(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
}

function pointId(id: unknown): string | number {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  if (typeof id === 'string' && UUID.test(id)) return id.toLowerCase();
  throw new QdrantHttpError(
    400,
    `Format error in JSON body: value ${JSON.stringify(id)} is not a valid point ID, valid values are either an unsigned integer or a UUID`,
  );
}

/** Integer ids come before UUIDs; UUIDs compare as 128-bit numbers (their lowercase hex). */
function compareIds(left: string | number, right: string | number): number {
  if (typeof left !== typeof right) return typeof left === 'number' ? -1 : 1;
  return left < right ? -1 : left > right ? 1 : 0;
}

function sortedPoints(collection: LoopbackCollection): LoopbackPoint[] {
  return [...collection.points.values()].sort((left, right) => compareIds(left.id, right.id));
}

/** Qdrant stores float32 and normalises vectors of Cosine collections (a near-zero vector is kept as is). */
function preprocess(vector: number[], distance: string): number[] {
  const stored = vector.map((value) => Math.fround(value));
  if (distance !== 'Cosine') return stored;
  const length = Math.fround(Math.sqrt(stored.reduce((sum, value) => sum + value * value, 0)));
  return length < FLOAT32_EPSILON ? stored : stored.map((value) => Math.fround(value / length));
}

function present(point: LoopbackPoint, withPayload: unknown, withVector: unknown): Record<string, unknown> {
  const shown: Record<string, unknown> = { id: point.id };
  if (withPayload === true) shown.payload = structuredClone(point.payload);
  else if (withPayload !== false && withPayload !== null) throw new QdrantHttpError(400, 'payload selectors are not implemented by the loopback server');
  if (withVector === true) shown.vector = [...point.vector];
  else if (withVector !== false && withVector !== null) throw new QdrantHttpError(400, 'vector selectors are not implemented by the loopback server');
  return shown;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
