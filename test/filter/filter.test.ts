import { describe, expect, it } from 'vitest';
import { FilterError } from '../../src/errors.ts';
import { compileFilter, parseFilter, type FilterableDocument } from '../../src/filter/index.ts';

const documents: FilterableDocument[] = [
  {
    id: 'a',
    sourceType: 'file',
    sourceName: 'guide.md',
    metadata: { lang: 'en', year: 2021, tags: ['billing', 'faq'], author: { name: 'Ada', age: 36 }, draft: false },
  },
  {
    id: 'b',
    sourceType: 'file',
    sourceName: 'notes.txt',
    metadata: { lang: 'fr', year: 2023, tags: ['billing'], author: { name: 'Blaise' }, title: 'Les notes' },
  },
  { id: 'c', sourceType: 'url', sourceName: 'https://example.test/x', metadata: { lang: 'en', year: 2019, tags: [], draft: true, title: null } },
  { id: 'd', sourceType: 'file', sourceName: 'empty.md', metadata: {} },
];

function matching(filter: unknown): string[] {
  const predicate = compileFilter(parseFilter(filter));
  return documents.filter(predicate).map((document) => document.id);
}

describe('filter language', () => {
  it.each([
    [{ lang: 'en' }, ['a', 'c']],
    [{ lang: { $eq: 'fr' } }, ['b']],
    [{ lang: { $ne: 'en' } }, ['b', 'd']],
    [{ year: { $gt: 2021 } }, ['b']],
    [{ year: { $gte: 2021 } }, ['a', 'b']],
    [{ year: { $lt: 2021 } }, ['c']],
    [{ year: { $lte: 2021 } }, ['a', 'c']],
    [{ year: { $gte: 2020, $lt: 2022 } }, ['a']],
    [{ lang: { $in: ['fr', 'de'] } }, ['b']],
    [{ lang: { $nin: ['fr'] } }, ['a', 'c', 'd']],
    [{ tags: 'faq' }, ['a']],
    [{ tags: { $contains: 'billing' } }, ['a', 'b']],
    [{ tags: { $in: ['faq', 'nothing'] } }, ['a']],
    [{ tags: { $ne: 'billing' } }, ['c', 'd']],
    [{ title: { $contains: 'not' } }, ['b']],
    [{ sourceName: { $contains: '.md' } }, ['a', 'd']],
    [{ sourceType: 'url' }, ['c']],
    [{ id: { $in: ['a', 'd'] } }, ['a', 'd']],
    [{ 'author.name': 'Ada' }, ['a']],
    [{ 'author.age': { $gt: 30 } }, ['a']],
    [{ 'author.name': { $exists: true } }, ['a', 'b']],
    [{ title: { $exists: true } }, ['b']],
    [{ title: { $exists: false } }, ['a', 'c', 'd']],
    [{ tags: { $exists: false } }, ['c', 'd']],
    [{ draft: false }, ['a']],
    [{ $or: [{ lang: 'fr' }, { draft: true }] }, ['b', 'c']],
    [{ $and: [{ lang: 'en' }, { year: { $gt: 2020 } }] }, ['a']],
    [{ $not: { lang: 'en' } }, ['b', 'd']],
    [{ lang: 'en', sourceType: 'file' }, ['a']],
    [{ $or: [{ $not: { tags: { $exists: true } } }, { 'author.name': 'Blaise' }] }, ['b', 'c', 'd']],
  ])('%j matches %j', (filter, expected) => {
    expect(matching(filter)).toEqual(expected);
  });

  it('reads own metadata fields only, never inherited ones', () => {
    expect(matching({ constructor: { $exists: true } })).toEqual([]);
    expect(matching({ 'author.toString': { $exists: true } })).toEqual([]);
  });

  it('compares numbers only', () => {
    expect(matching({ lang: { $gt: 1 } })).toEqual([]);
  });

  it.each([
    [{ lang: { $regex: 'e.' } }, 'lang.$regex', /Unknown operator \$regex/],
    [{ $nor: [{ a: 1 }] }, '$nor', /Unknown operator \$nor/],
    [{ year: { $gt: '2020' } }, 'year.$gt', /compares numbers/],
    [{ year: { $gt: Number.NaN } }, 'year.$gt', /compares numbers/],
    [{ lang: { $in: [] } }, 'lang.$in', /non-empty array/],
    [{ lang: { $in: 'en' } }, 'lang.$in', /non-empty array/],
    [{ $or: [] }, '$or', /non-empty array/],
    [{ $or: [{ lang: { $bad: 1 } }] }, '$or[0].lang.$bad', /Unknown operator/],
    [{ author: { name: 'Ada' } }, 'author.name', /dotted path/],
    [{ lang: null }, 'lang', /\$exists: false/],
    [{ lang: {} }, 'lang', /empty operator object/],
    [{ title: { $exists: 'yes' } }, 'title.$exists', /true or false/],
    [{ 'a..b': 1 }, 'a..b', /not a valid field path/],
  ])('rejects %j at %s', (filter, path, message) => {
    let caught: unknown;
    try {
      parseFilter(filter);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FilterError);
    expect((caught as FilterError).code).toBe('FILTER_INVALID');
    expect((caught as FilterError).path).toBe(path);
    expect((caught as FilterError).message).toMatch(message);
  });

  it('rejects a filter that is not an object', () => {
    expect(() => parseFilter('lang = en')).toThrow(FilterError);
    expect(() => parseFilter([{ lang: 'en' }])).toThrow(FilterError);
  });
});
