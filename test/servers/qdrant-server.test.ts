import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesFilter, startQdrantServer, type QdrantLoopbackServer } from './qdrant-server.ts';

/**
 * The loopback server's filter semantics, pinned to the examples of Qdrant's filtering documentation and
 * the cases of its condition-checker tests, so the store's filter-equivalence test rests on Qdrant's
 * behaviour rather than on our reading of it alone.
 */
describe('loopback Qdrant filter semantics', () => {
  const CITIES = [
    { id: 1, city: 'London', color: 'green' },
    { id: 2, city: 'London', color: 'red' },
    { id: 3, city: 'London', color: 'blue' },
    { id: 4, city: 'Berlin', color: 'red' },
    { id: 5, city: 'Moscow', color: 'green' },
    { id: 6, city: 'Moscow', color: 'blue' },
  ];
  const select = (filter: unknown) => CITIES.filter((payload) => matchesFilter(filter, payload)).map((payload) => payload.id);
  const london = { key: 'city', match: { value: 'London' } };
  const red = { key: 'color', match: { value: 'red' } };

  it('combines must, should and must_not as the documentation shows', () => {
    expect(select({ must: [london, red] })).toEqual([2]);
    expect(select({ should: [london, red] })).toEqual([1, 2, 3, 4]);
    expect(select({ must_not: [london, red] })).toEqual([5, 6]);
    expect(select({ must: [london], must_not: [red] })).toEqual([1, 3]);
    expect(select({ must_not: [{ must: [london, red] }] })).toEqual([1, 3, 4, 5, 6]);
    expect(select({ should: [] })).toEqual([]);
  });

  it('matches any element of an array for match.value, match.any and range; match.except needs one element outside', () => {
    const payload = { color: ['black', 'green'], rating: [3, 7, 9] };
    expect(matchesFilter({ must: [{ key: 'color', match: { value: 'green' } }] }, payload)).toBe(true);
    expect(matchesFilter({ must: [{ key: 'color', match: { any: ['black', 'yellow'] } }] }, payload)).toBe(true);
    expect(matchesFilter({ must: [{ key: 'color', match: { except: ['black', 'yellow'] } }] }, payload)).toBe(true);
    expect(matchesFilter({ must: [{ key: 'color', match: { except: ['black', 'green'] } }] }, payload)).toBe(false);
    expect(matchesFilter({ must: [{ key: 'rating', range: { gt: 8 } }] }, payload)).toBe(true);
    expect(matchesFilter({ must: [{ key: 'rating', values_count: { lt: 5 } }] }, payload)).toBe(true);
  });

  it('reads nested keys by dots, and arrays only through []', () => {
    const germany = { country: { name: 'Germany', cities: [{ name: 'Berlin', population: 3.7, sightseeing: ['Brandenburg Gate', 'Reichstag'] }] } };
    const japan = { country: { name: 'Japan', cities: [{ name: 'Tokyo', population: 9.3, sightseeing: ['Tokyo Tower'] }] } };
    const countries = [germany, japan];
    const names = (filter: unknown) => countries.filter((payload) => matchesFilter(filter, payload)).map((payload) => payload.country.name);
    expect(names({ should: [{ key: 'country.name', match: { value: 'Germany' } }] })).toEqual(['Germany']);
    expect(names({ should: [{ key: 'country.cities[].population', range: { gte: 9.0 } }] })).toEqual(['Japan']);
    expect(names({ should: [{ key: 'country.cities[].sightseeing', match: { value: 'Reichstag' } }] })).toEqual(['Germany']);
    expect(names({ should: [{ key: 'country.cities.population', range: { gte: 0 } }] })).toEqual([]);
    expect(matchesFilter({ must: [{ key: '"odd key".x', match: { value: 1 } }] }, { 'odd key': { x: 1 } })).toBe(true);
  });

  it('treats missing, null and [] as empty, and only null as null (Qdrant condition-checker cases)', () => {
    const payload = { price: 499.9, parts: [], packaging: null, not_null: [null] };
    const isEmpty = (key: string) => matchesFilter({ must: [{ is_empty: { key } }] }, payload);
    const isNull = (key: string) => matchesFilter({ must: [{ is_null: { key } }] }, payload);
    expect(['price', 'something_new', 'parts', 'packaging', 'not_null'].map(isEmpty)).toEqual([false, true, true, true, false]);
    expect(['price', 'parts', 'something_else', 'packaging', 'not_null'].map(isNull)).toEqual([false, false, false, true, false]);
  });

  it('compares integers exactly and never matches a float with match.value', () => {
    expect(matchesFilter({ must: [{ key: 'n', match: { value: 3 } }] }, { n: 3 })).toBe(true);
    expect(matchesFilter({ must: [{ key: 'n', match: { value: 3 } }] }, { n: 3.5 })).toBe(false);
    expect(matchesFilter({ must: [{ key: 'n', match: { value: '3' } }] }, { n: 3 })).toBe(false);
    expect(() => matchesFilter({ must: [{ key: 'n', match: { value: 3.5 } }] }, { n: 3.5 })).toThrow(/ValueVariants/);
    expect(() => matchesFilter({ must: [{ key: 'n', match: { any: ['a', 1] } }] }, { n: 1 })).toThrow(/AnyVariants/);
  });
});

describe('loopback Qdrant REST answers', () => {
  let server: QdrantLoopbackServer;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { result?: unknown; status: unknown } };
  };
  beforeAll(async () => {
    server = await startQdrantServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers in the { result, status, time } envelope and errors as { status: { error } }', async () => {
    expect(await call('PUT', '/collections/c', { vectors: { size: 2, distance: 'Cosine' } })).toMatchObject({
      status: 200,
      body: { result: true, status: 'ok' },
    });
    expect(await call('PUT', '/collections/c', { vectors: { size: 2, distance: 'Cosine' } })).toMatchObject({
      status: 409,
      body: { status: { error: 'Wrong input: Collection `c` already exists!' } },
    });
    expect(await call('GET', '/collections/none')).toMatchObject({ status: 404, body: { status: { error: "Not found: Collection `none` doesn't exist!" } } });
    expect(await call('PUT', '/collections/c/points?wait=true', { points: [{ id: 1, vector: [1, 0, 0] }] })).toMatchObject({
      status: 400,
      body: { status: { error: 'Wrong input: Vector dimension error: expected dim: 2, got 3' } },
    });
    expect(await call('PUT', '/collections/c/points?wait=true', { points: [{ id: 'not-a-uuid', vector: [1, 0] }] })).toMatchObject({ status: 400 });
  });

  it('scrolls in id order with next_page_offset, integers before UUIDs', async () => {
    const points = [3, 1, 'ffffffff-0000-4000-8000-000000000000', 2, '00000000-0000-4000-8000-000000000000'].map((id) => ({ id, vector: [1, 1], payload: {} }));
    expect(await call('PUT', '/collections/c/points?wait=true', { points })).toMatchObject({ body: { result: { status: 'completed' } } });
    const first = await call('POST', '/collections/c/points/scroll', { limit: 2 });
    expect(first.body.result).toEqual({
      points: [
        { id: 1, payload: {} },
        { id: 2, payload: {} },
      ],
      next_page_offset: 3,
    });
    const last = await call('POST', '/collections/c/points/scroll', { limit: 3, offset: '00000000-0000-4000-8000-000000000000' });
    expect(last.body.result).toMatchObject({
      points: [{ id: '00000000-0000-4000-8000-000000000000' }, { id: 'ffffffff-0000-4000-8000-000000000000' }],
      next_page_offset: null,
    });
  });
});
