/**
 * Seeded generators of documents and filters for the filter-equivalence tests (loopback and live): values of
 * every shape the filter semantics care about (missing, null, scalars of each type, empty, mixed and nested
 * arrays, objects, arrays of objects) and filters over every operator the Qdrant store translates.
 */
import type { Document, JsonValue } from '../../../src/document.ts';
import type { Filter } from '../../../src/filter/index.ts';
import { mulberry32, type Random } from '../../helpers/random.ts';

export { mulberry32, type Random };

const STRINGS = ['a', 'b', 'en', 'fr', '', 'A'];
const FIELDS = [
  'lang',
  'year',
  'tags',
  'flag',
  'score',
  'author.name',
  'author.age',
  'odd key',
  'nested.deep.value',
  'missing',
  'id',
  'sourceType',
  'sourceName',
];

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

function randomScalar(random: Random): JsonValue {
  return pick(random, [
    () => pick(random, STRINGS),
    () => pick(random, [0, 1, 2, 2019, 2020, -3]),
    () => pick(random, [0.5, 2.5, 1e-3]),
    () => random() < 0.5,
    () => null,
  ])();
}

/** Values of every shape the filter semantics care about: missing, null, scalars, arrays (empty, mixed, nested), objects. */
function randomValue(random: Random, depth = 0): JsonValue | undefined {
  const roll = random();
  if (roll < 0.15) return undefined;
  if (roll < 0.55) return randomScalar(random);
  if (roll < 0.85)
    return Array.from({ length: Math.floor(random() * 4) }, () =>
      random() < 0.1 && depth < 1 ? (randomValue(random, depth + 1) ?? null) : randomScalar(random),
    );
  return depth < 1 ? { name: randomScalar(random), age: randomScalar(random) } : randomScalar(random);
}

export function randomDocument(index: number, random: Random): Document {
  const metadata: Record<string, JsonValue> = {};
  for (const field of ['lang', 'year', 'tags', 'flag', 'score', 'odd key']) {
    const value = randomValue(random);
    if (value !== undefined) metadata[field] = value;
  }
  const author = random() < 0.7 ? { name: randomScalar(random), age: randomScalar(random) } : randomValue(random, 1);
  if (author !== undefined) metadata.author = random() < 0.15 ? [author] : author;
  if (random() < 0.5) metadata.nested = { deep: random() < 0.8 ? { value: randomValue(random, 1) ?? null } : [{ value: 1 }] };
  return {
    id: `doc-${index % 7}-${index}`,
    content: `document ${index}`,
    sourceType: pick(random, ['file', 'url']),
    sourceName: pick(random, ['a.md', 'b.md', '']),
    score: 0,
    metadata,
    embedding: [1, (index % 5) / 5, (index % 3) / 3],
  };
}

function randomOperand(random: Random, field: string): unknown {
  const value = (): string | number | boolean => {
    if (field === 'id') return `doc-${Math.floor(random() * 7)}-${Math.floor(random() * 48)}`;
    if (field === 'sourceType') return pick(random, ['file', 'url', 'b']);
    if (field === 'sourceName') return pick(random, ['a.md', 'b.md', '']);
    const scalar = randomScalar(random);
    return scalar === null ? 'a' : (scalar as string | number | boolean);
  };
  const number = () => pick(random, [0, 1, 2, 2019, 2020, 0.5, -3, 2.5]);
  const values = () => Array.from({ length: 1 + Math.floor(random() * 3) }, value);
  switch (Math.floor(random() * 9)) {
    case 0:
      return value();
    case 1:
      return { $eq: value() };
    case 2:
      return { $ne: value() };
    case 3:
      return { [pick(random, ['$gt', '$gte', '$lt', '$lte'])]: number() };
    case 4:
      return { $gte: number(), $lt: number() };
    case 5:
      return { $in: values() };
    case 6:
      return { $nin: values() };
    default:
      return { $exists: random() < 0.5 };
  }
}

export function randomFilter(random: Random, depth: number): Filter {
  const roll = random();
  if (depth < 3 && roll < 0.15) return { $and: Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomFilter(random, depth + 1)) };
  if (depth < 3 && roll < 0.3) return { $or: Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomFilter(random, depth + 1)) };
  if (depth < 3 && roll < 0.4) return { $not: randomFilter(random, depth + 1) };
  const field = pick(random, FIELDS);
  const filter: Filter = { [field]: randomOperand(random, field) };
  if (random() < 0.2) {
    const other = pick(random, FIELDS);
    if (other !== field) filter[other] = randomOperand(random, other);
  }
  return filter;
}
