/**
 * The checks of `Bm25Index`'s arguments (bm25-index.ts), each an `AxonError` naming what to pass instead, and
 * the small pieces a search composes: the combined filter and the order equal scores are ranked in.
 */
import { AxonError } from '../../src/errors.ts';
import type { FilterPredicate } from '../../src/filter/index.ts';
import { COMPONENT } from './bm25-bytes.ts';
import type { Bm25DocumentInput } from './bm25-index-options.ts';

/**
 * Throw unless `documents` is an array of well-formed documents.
 * @throws AxonError `INVALID_INPUT` for a non-array, `INVALID_DOCUMENT` naming the first bad document
 */
export function assertDocuments(documents: readonly Bm25DocumentInput[]): void {
  if (!Array.isArray(documents)) throw invalidArgument('documents', 'add() takes an array of documents.', 'Pass the documents as an array, even one.');
  documents.forEach(validateDocument);
}

/** Throw `DUPLICATE_ID` for the first id that repeats within one batch. */
export function assertUniqueIds(documents: readonly Bm25DocumentInput[]): void {
  const batchIds = new Set<string>();
  documents.forEach((document, position) => {
    if (batchIds.has(document.id)) {
      throw new AxonError('DUPLICATE_ID', `documents[${position}] repeats the id "${document.id}" within one add().`, {
        component: COMPONENT,
        fix: 'Give each document its own id, or add the replacement in a later call.',
        details: { id: document.id },
      });
    }
    batchIds.add(document.id);
  });
}

/** Throw `INVALID_INPUT` unless the query is a string. */
export function assertQuery(query: unknown): void {
  if (typeof query !== 'string') {
    throw invalidArgument('query', `search() takes the query as a string, got ${typeof query}.`, "Pass the query text as a string: search('refund policy').");
  }
}

/** Throw `INVALID_TOP_K` unless `topK` is a positive integer. */
export function assertSearchTopK(topK: number): void {
  if (!Number.isInteger(topK) || topK < 1) {
    throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
      component: COMPONENT,
      fix: 'Pass topK as a whole number of at least 1, or leave it out.',
      details: { topK },
    });
  }
}

export function combinePredicates(first: FilterPredicate | undefined, second: FilterPredicate | undefined): FilterPredicate | undefined {
  if (first && second) return (document) => first(document) && second(document);
  return first ?? second;
}

/** Ids in code-unit order: the order equal scores are ranked in. */
export function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

// --- Internal helpers ---

function validateDocument(document: Bm25DocumentInput, position: number): void {
  const where = `documents[${position}]`;
  const fail = (message: string): never => {
    throw new AxonError('INVALID_DOCUMENT', `${where}${message}`, {
      component: COMPONENT,
      fix: 'Pass documents of the form { id, content, sourceType?, sourceName?, metadata? }.',
    });
  };
  if (document === null || typeof document !== 'object') fail(' is not an object.');
  if (typeof document.id !== 'string' || document.id === '') fail('.id must be a non-empty string.');
  if (typeof document.content !== 'string') fail('.content must be a string.');
  if (document.sourceType !== undefined && typeof document.sourceType !== 'string') fail('.sourceType must be a string.');
  if (document.sourceName !== undefined && typeof document.sourceName !== 'string') fail('.sourceName must be a string.');
  if (document.metadata !== undefined && (document.metadata === null || typeof document.metadata !== 'object' || Array.isArray(document.metadata))) {
    fail('.metadata must be a plain object.');
  }
}

function invalidArgument(argument: string, message: string, fix: string): AxonError {
  return new AxonError('INVALID_INPUT', message, { component: COMPONENT, fix, details: { argument } });
}
