/**
 * The checks `VectorIndex` makes of what it is given: a document to store, a vector (scaled to unit length as it
 * is written).
 */
import { assertJsonMetadata, type Document, type Vector } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { assertVector } from '../../src/runtime/embed.ts';

/** Validate `vector` and write it, scaled to unit length, at row `row` of `target`. */
export function writeUnitVector(vector: unknown, dimensions: number | undefined, target: Float32Array, row: number, component: string, label: string): void {
  assertVector(vector, dimensions, component, label);
  const length = vector.length;
  // Scaling by the largest component first keeps the sum of squares finite for huge values.
  let largest = 0;
  for (let index = 0; index < length; index++) largest = Math.max(largest, Math.abs(vector[index]));
  if (largest === 0) {
    throw new AxonError('INVALID_VECTOR', `${label} is all zeros; cosine similarity is undefined for it.`, {
      component,
      fix: 'Skip empty texts before embedding, or check the embeddings provider.',
    });
  }
  let sumOfSquares = 0;
  for (let index = 0; index < length; index++) {
    const scaled = vector[index] / largest;
    sumOfSquares += scaled * scaled;
  }
  const inverse = 1 / (Math.sqrt(sumOfSquares) * largest);
  const base = row * length;
  for (let index = 0; index < length; index++) target[base + index] = vector[index] * inverse;
}

export function firstEmbeddingLength(documents: readonly Document[]): number | undefined {
  for (const document of documents) {
    const embedding = document?.embedding;
    if (isArrayLike(embedding) && embedding.length > 0) return embedding.length;
  }
  return undefined;
}

export function isArrayLike(value: unknown): value is Vector {
  return Array.isArray(value) || value instanceof Float32Array;
}

export function assertStorable(document: Document, position: number, component: string): void {
  const where = `documents[${position}]`;
  if (document === null || typeof document !== 'object') {
    throw new AxonError('INVALID_DOCUMENT', `${where} is not an object.`, {
      component,
      fix: 'Pass Document objects ({ id, content, sourceType, sourceName, metadata, embedding }).',
    });
  }
  if (typeof document.id !== 'string' || document.id === '') {
    throw new AxonError('INVALID_DOCUMENT', `${where}.id must be a non-empty string.`, {
      component,
      fix: 'Normalise inputs with normalizeDocument() to get stable ids.',
    });
  }
  for (const field of ['content', 'sourceType', 'sourceName'] as const) {
    if (typeof document[field] !== 'string') {
      throw new AxonError('INVALID_DOCUMENT', `${where}.${field} must be a string.`, {
        component,
        fix: `Give ${field} as a string ('' when empty), or add through rag.addDocuments, which fills in sourceType and sourceName.`,
      });
    }
  }
  const metadata: unknown = document.metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new AxonError('INVALID_DOCUMENT', `${where}.metadata must be a plain object of JSON values.`, {
      component,
      fix: 'Give every document a metadata object ({} when it has none), or add through rag.addDocuments, which fills it in.',
    });
  }
  assertJsonMetadata(metadata, `${where}.metadata`, component);
}

/** Every value of `values` is a finite number (`label` names them in the error). @throws AxonError `INVALID_VECTOR` */
export function assertFinite(values: Float32Array, component: string, label: string): void {
  for (let index = 0; index < values.length; index++) {
    if (!Number.isFinite(values[index])) {
      throw new AxonError('INVALID_VECTOR', `${label}[${index}] is ${values[index]}; every component must be a finite number.`, {
        component,
        fix: 'Check what made the vector: NaN and Infinity cannot be searched.',
      });
    }
  }
}
