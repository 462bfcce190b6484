/**
 * The argument checks every index and store shares. A module of its own, imported by the vector index, the
 * SIMD space, the HNSW graph and the stores alike, so none of them imports another just for a check.
 */
import type { Document, Vector } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { assertVector } from '../../src/runtime/embed.ts';

/** Throw `INVALID_TOP_K` unless `topK` is a positive integer. */
export function assertTopK(topK: unknown, component: string): asserts topK is number {
  if (typeof topK !== 'number' || !Number.isSafeInteger(topK) || topK < 1) {
    throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
      component,
      fix: 'Pass topK as 1, 2, 3, … (the store default is 50).',
      details: { topK },
    });
  }
}

/** Throw `INVALID_OPTION` unless `ef` (the candidates of an ANN search) is absent or a positive integer. */
export function assertEf(ef: unknown, component: string): asserts ef is number | undefined {
  if (ef !== undefined && (typeof ef !== 'number' || !Number.isSafeInteger(ef) || ef < 1)) {
    throw new AxonError('INVALID_OPTION', `ef must be a positive integer, got ${String(ef)}.`, {
      component,
      fix: 'Pass ef as 40, 160, 400, … (more finds more of the exact top K, more slowly), or leave it out for the store default.',
      details: { option: 'ef' },
    });
  }
}

/** Throw `INVALID_INPUT` unless the source arguments of `deleteBySource`/`getBySource` are strings. */
export function assertSourceArguments(sourceType: unknown, sourceName: unknown, component: string): asserts sourceType is string {
  if (typeof sourceType !== 'string' || (sourceName !== undefined && typeof sourceName !== 'string')) {
    throw new AxonError('INVALID_INPUT', 'sourceType must be a string, and sourceName a string when given.', {
      component,
      fix: "Pass the source type as a string (e.g. 'file'), and the source name as a string or not at all.",
      details: { argument: typeof sourceType !== 'string' ? 'sourceType' : 'sourceName' },
    });
  }
}

/** Throw `INVALID_ID` unless `ids` is an array of strings. */
export function assertIdList(ids: unknown, component: string): asserts ids is string[] {
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
    throw new AxonError('INVALID_ID', 'getByIds takes an array of string ids.', {
      component,
      fix: "Pass the ids as an array of strings, e.g. getByIds(['a1', 'b2']).",
      details: { argument: 'ids' },
    });
  }
}

/**
 * Throw unless `document` has what every store keeps (a non-empty string id, string content, sourceType and
 * sourceName) and its id is not already in `seen` (the ids of the same add); adds the id to `seen`.
 */
export function assertStorableDocument(document: Document, where: string, seen: Set<string>, component: string): void {
  if (document === null || typeof document !== 'object' || typeof document.id !== 'string' || document.id === '' || typeof document.content !== 'string') {
    throw new AxonError('INVALID_DOCUMENT', `${where} needs a non-empty string id and a string content.`, {
      component,
      fix: 'Give every document an id and its content as strings, or add through rag.addDocuments, which derives the ids.',
    });
  }
  if (typeof document.sourceType !== 'string' || typeof document.sourceName !== 'string') {
    throw new AxonError('INVALID_DOCUMENT', `${where} needs string sourceType and sourceName.`, {
      component,
      fix: "Give every document sourceType and sourceName as strings ('' for no name), or add through rag.addDocuments, which fills them in.",
    });
  }
  if (seen.has(document.id)) {
    throw new AxonError('DUPLICATE_ID', `${where} repeats the id "${document.id}" within one add.`, {
      component,
      fix: 'Give every document of a batch its own id.',
      details: { id: document.id },
    });
  }
  seen.add(document.id);
}

/** Shortest vector a cosine store accepts: a margin above float32 epsilon, below which the cosine is undefined (and Qdrant does not normalise). */
const MINIMUM_NORM = 1e-6;

/**
 * Throw unless `vector` is a query or embedding a server store that keeps float32 vectors by cosine (pgvector,
 * Qdrant) can hold: `DIMENSION_MISMATCH` naming the store's table or collection when `size` is known and
 * differs; `INVALID_VECTOR` when it is not a non-empty array of finite numbers, has a component past the
 * float32 range (finite in float64, infinite once stored), or is all zeros (or nearly).
 */
export function assertFloat32Vector(
  vector: unknown,
  size: number | undefined,
  where: { component: string; label: string; container: 'table' | 'collection'; name: string },
): asserts vector is Vector {
  const { component, label, container, name } = where;
  const length = (vector as { length?: unknown } | null)?.length;
  if (size !== undefined && typeof length === 'number' && length > 0 && length !== size) {
    throw new AxonError('DIMENSION_MISMATCH', `${label} has ${length} dimensions; ${container} "${name}" holds vectors of ${size}.`, {
      component,
      fix: `Use the embeddings model the ${container} was filled with, or another ${container} name.`,
      details: { [container]: name, expected: size, actual: length },
    });
  }
  assertVector(vector, size, component, label);
  let squares = 0;
  for (let index = 0; index < vector.length; index++) squares += Math.fround(vector[index]) ** 2;
  if (!Number.isFinite(squares) || vector.some((value) => !Number.isFinite(Math.fround(value)))) {
    throw new AxonError('INVALID_VECTOR', `${label} has components beyond the float32 range (±3.4e38) that ${container} "${name}" stores.`, {
      component,
      fix: 'Check the embeddings provider.',
    });
  }
  if (Math.sqrt(squares) < MINIMUM_NORM) {
    throw new AxonError('INVALID_VECTOR', `${label} is all zeros (or nearly); cosine similarity is undefined for it.`, {
      component,
      fix: 'Skip empty texts before embedding, or check the embeddings provider.',
    });
  }
}
