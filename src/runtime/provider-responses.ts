import type { RerankResult } from '../contracts/reranker.ts';
import type { Vector } from '../document.ts';
import { invalidResponseError as invalid } from './http.ts';

/**
 * Strict checks of what remote services send back, shared by every provider, so a wrong answer becomes a
 * `PROVIDER_RESPONSE_INVALID` error naming the provider and the HTTP status instead of a silently wrong list.
 */

export interface RerankResponseExpectation {
  /** How many documents were sent. */
  documentCount: number;
  /** How many results were asked for; longer answers are cut after sorting. */
  topN: number;
  /** The score's field name on the wire, used in messages (`relevance_score`). */
  scoreField: string;
  /** Where the list was found on the wire, used in messages. @default 'results' */
  path?: string;
}

/**
 * Validate a reranker's `results` (each `{index, <scoreField>}`) and return them best first.
 *
 * @throws ProviderError `PROVIDER_RESPONSE_INVALID` when the list is missing, an item is not an object, an index
 * is not an integer in range or appears twice, or a score is missing or not a finite number.
 */
export function rerankResultsFromResponse(provider: string, status: number | undefined, results: unknown, expected: RerankResponseExpectation): RerankResult[] {
  const path = expected.path ?? 'results';
  if (!Array.isArray(results)) throw invalid(provider, status, `${path} is ${describe(results)}, expected an array.`);
  const seen = new Set<number>();
  const validated = results.map((item: unknown, position): RerankResult & { position: number } => {
    const where = `${path}[${position}]`;
    if (!item || typeof item !== 'object') throw invalid(provider, status, `${where} is ${describe(item)}, expected an object.`);
    const { index } = item as { index?: unknown };
    const score = (item as Record<string, unknown>)[expected.scoreField];
    if (typeof index !== 'number' || !Number.isInteger(index)) throw invalid(provider, status, `${where}.index is ${describe(index)}, expected an integer.`);
    if (index < 0 || index >= expected.documentCount) {
      throw invalid(provider, status, `${where}.index is ${index}, outside 0..${expected.documentCount - 1} (${expected.documentCount} documents were sent).`);
    }
    if (seen.has(index)) throw invalid(provider, status, `${where}.index ${index} appears more than once.`);
    seen.add(index);
    if (score === undefined || score === null) throw invalid(provider, status, `${where}.${expected.scoreField} is missing.`);
    if (typeof score !== 'number' || !Number.isFinite(score))
      throw invalid(provider, status, `${where}.${expected.scoreField} is ${describe(score)}, expected a finite number.`);
    return { index, relevanceScore: score, position };
  });
  // Best first; ties keep the service's order, then fall back to the original document order.
  validated.sort((left, right) => right.relevanceScore - left.relevanceScore || left.position - right.position);
  return validated.slice(0, Math.max(0, expected.topN)).map(({ index, relevanceScore }) => ({ index, relevanceScore }));
}

export interface EmbeddingsResponseExpectation {
  /** How many texts were sent; exactly this many vectors must come back. */
  count: number;
  /** Declared vector length, when known. */
  dimensions?: number;
  /** Where the list was found on the wire, used in messages. @default 'data' */
  path?: string;
}

/**
 * Validate OpenAI-style `data: [{index, embedding}]` and return the vectors in input order (by `index`, never
 * by position). A string embedding is decoded as base64 little-endian float32.
 *
 * @throws ProviderError `PROVIDER_RESPONSE_INVALID` for a wrong count, a missing/duplicate/out-of-range index,
 * a non-numeric or non-finite component, or vectors of different lengths.
 */
export function vectorsFromIndexedData(provider: string, status: number | undefined, data: unknown, expected: EmbeddingsResponseExpectation): Vector[] {
  const path = expected.path ?? 'data';
  if (!Array.isArray(data)) throw invalid(provider, status, `${path} is ${describe(data)}, expected an array.`);
  if (data.length !== expected.count) throw invalid(provider, status, `asked for ${expected.count} embeddings, received ${data.length}.`);
  const ordered = new Array<unknown>(expected.count);
  data.forEach((item: unknown, position) => {
    const where = `${path}[${position}]`;
    if (!item || typeof item !== 'object') throw invalid(provider, status, `${where} is ${describe(item)}, expected an object.`);
    const { index, embedding } = item as { index?: unknown; embedding?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index)) throw invalid(provider, status, `${where}.index is ${describe(index)}, expected an integer.`);
    if (index < 0 || index >= expected.count) throw invalid(provider, status, `${where}.index is ${index}, outside 0..${expected.count - 1}.`);
    if (ordered[index] !== undefined) throw invalid(provider, status, `${where}.index ${index} appears more than once.`);
    ordered[index] = typeof embedding === 'string' ? decodeBase64Floats(provider, status, embedding, `${where}.embedding`) : (embedding ?? null);
  });
  return validateVectors(provider, status, ordered, { ...expected, path: `${path}[].embedding` });
}

/**
 * Validate a plain list of vectors (Cohere's `embeddings.float`): the right count, every component a finite
 * number, every vector of the same length (and of `dimensions` when declared).
 */
export function validateVectors(provider: string, status: number | undefined, vectors: unknown, expected: EmbeddingsResponseExpectation): Vector[] {
  const path = expected.path ?? 'embeddings';
  if (!Array.isArray(vectors)) throw invalid(provider, status, `${path} is ${describe(vectors)}, expected an array.`);
  if (vectors.length !== expected.count) throw invalid(provider, status, `asked for ${expected.count} embeddings, received ${vectors.length}.`);
  let length = expected.dimensions;
  return vectors.map((vector: unknown, position) => {
    const where = `embedding ${position}`;
    if (!(Array.isArray(vector) || vector instanceof Float32Array) || vector.length === 0)
      throw invalid(provider, status, `${where} is ${describe(vector)}, expected a non-empty array of numbers.`);
    length ??= vector.length;
    if (vector.length !== length) throw invalid(provider, status, `${where} has ${vector.length} dimensions, expected ${length}.`);
    for (let component = 0; component < vector.length; component++) {
      // Number.isFinite is false for non-numbers too, so this one check covers strings, null and NaN.
      if (!Number.isFinite(vector[component]))
        throw invalid(provider, status, `${where}[${component}] is ${describe(vector[component])}, expected a finite number.`);
    }
    return vector as Vector;
  });
}

// --- Internal helpers ---

function decodeBase64Floats(provider: string, status: number | undefined, text: string, where: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) throw invalid(provider, status, `${where} is not base64 of float32 values.`);
  // Copy into a fresh, aligned buffer: Buffer.from may hand back a slice of a shared pool at any offset.
  const aligned = new Uint8Array(bytes.length);
  aligned.set(bytes);
  return new Float32Array(aligned.buffer);
}

const NUMBER_LIKE = /^(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?Infinity|NaN)$/i;

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  // A response may echo a key: quote only strings too short to be one, or that read as a number.
  if (typeof value === 'string') {
    return value.length <= 6 || NUMBER_LIKE.test(value) ? `the string ${JSON.stringify(value)}` : `a string of ${value.length} characters`;
  }
  if (Array.isArray(value)) return 'an array';
  return `a${typeof value === 'object' ? 'n object' : ` ${typeof value}`}`;
}
