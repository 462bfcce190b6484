import { createHash } from 'node:crypto';
import { AxonError } from './errors.ts';

/** A JSON value, as stored in document metadata. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A vector, as produced by an embeddings provider. */
export type Vector = number[] | Float32Array;

/**
 * A unit of retrievable text. Chunks carry `metadata.chunkIndex`; documents from paged formats carry
 * `metadata.pageNumber` (1-based).
 */
export interface Document {
  /** Stable identifier; the same content from the same source keeps the same id across runs. */
  id: string;
  content: string;
  embedding?: Vector;
  /** The kind of source, e.g. `file`, `url`, `manual`. */
  sourceType: string;
  /** The source itself, e.g. a file path. */
  sourceName: string;
  /** Higher is more relevant. Which stage set it is recorded in the run trace. */
  score: number;
  metadata: Record<string, JsonValue>;
}

/** What a caller passes to `addDocuments`: the id and score may be left out. */
export interface DocumentInput {
  id?: string;
  content: string;
  embedding?: Vector;
  sourceType?: string;
  sourceName?: string;
  metadata?: Record<string, JsonValue>;
}

/** Where a statement in an answer comes from. */
export interface Citation {
  /** 1-based label of the evidence as shown to the model (`[1]`). */
  label: number;
  /** The chunk id. */
  id: string;
  sourceType: string;
  sourceName: string;
  pageNumber?: number;
  chunkIndex?: number;
}

/** A hex digest of normalised content: whitespace runs collapse and case folds, so trivial copies collide. */
export function contentHash(content: string): string {
  return createHash('sha256').update(content.replace(/\s+/g, ' ').trim().toLowerCase()).digest('hex').slice(0, 32);
}

/** The default id of a document: derived from its source, chunk index and content, so it is stable across runs. */
export function defaultDocumentId(input: { content: string; sourceType: string; sourceName: string; metadata?: Record<string, JsonValue> }): string {
  const chunk = input.metadata?.chunkIndex;
  return createHash('sha256')
    .update(`${input.sourceType}\u0000${input.sourceName}\u0000${chunk ?? ''}\u0000${input.content}`)
    .digest('hex')
    .slice(0, 24);
}

/**
 * Validate a caller's input and fill in the defaults. Throws `INVALID_DOCUMENT` naming the offending
 * position and field; never returns a half-valid document.
 */
export function normalizeDocument(input: DocumentInput, position: number, component = 'rag'): Document {
  const where = `documents[${position}]`;
  if (input === null || typeof input !== 'object') {
    throw new AxonError('INVALID_DOCUMENT', `${where} is not an object.`, {
      component,
      fix: 'Pass objects of the form { content, sourceType?, sourceName?, metadata? }.',
    });
  }
  if (typeof input.content !== 'string' || input.content.trim() === '') {
    throw new AxonError('INVALID_DOCUMENT', `${where}.content must be a non-empty string.`, { component, fix: 'Skip empty texts before adding them.' });
  }
  if (input.id !== undefined && (typeof input.id !== 'string' || input.id === '')) {
    throw new AxonError('INVALID_DOCUMENT', `${where}.id must be a non-empty string when given.`, {
      component,
      fix: 'Leave id out to have one derived from the source and content.',
    });
  }
  for (const field of ['sourceType', 'sourceName'] as const) {
    if (input[field] !== undefined && typeof input[field] !== 'string') {
      throw new AxonError('INVALID_DOCUMENT', `${where}.${field} must be a string.`, {
        component,
        fix: `Pass ${field} as a string (sourceName is usually the file path), or leave it out.`,
      });
    }
  }
  const metadata = input.metadata ?? {};
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new AxonError('INVALID_DOCUMENT', `${where}.metadata must be a plain object of JSON values.`, {
      component,
      fix: 'Pass metadata as a plain object, { key: value }, or leave it out.',
    });
  }
  assertJsonMetadata(metadata, `${where}.metadata`, component);
  const sourceType = input.sourceType ?? 'manual';
  const sourceName = input.sourceName ?? '';
  const document: Document = {
    id: input.id ?? defaultDocumentId({ content: input.content, sourceType, sourceName, metadata }),
    content: input.content,
    sourceType,
    sourceName,
    score: 0,
    metadata: { ...metadata },
  };
  if (input.embedding !== undefined) document.embedding = input.embedding;
  return document;
}

/** How deep metadata may nest (objects and arrays); deeper is refused, so no reader of it can overflow the stack. */
export const MAX_METADATA_DEPTH = 64;

/**
 * Check that `value` is metadata JSON can hold exactly: strings, finite numbers, booleans, null, arrays and
 * plain objects, nested at most `MAX_METADATA_DEPTH` deep, with no cycle. Throws `INVALID_DOCUMENT` naming
 * the path of the first problem. The one check every store and `normalizeDocument` use.
 */
export function assertJsonMetadata(value: unknown, path: string, component: string): void {
  assertJsonValue(value, path, component, 0, new Set());
}

function assertJsonValue(value: unknown, path: string, component: string, depth: number, ancestors: Set<object>): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new AxonError('INVALID_DOCUMENT', `${path} is ${value}; metadata numbers must be finite.`, {
        component,
        fix: 'Store a finite number, null, or the value as a string: JSON has no NaN or Infinity.',
      });
    }
    return;
  }
  const container = Array.isArray(value) || (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype);
  if (!container) {
    throw new AxonError('INVALID_DOCUMENT', `${path} is not a JSON value (${typeof value}).`, {
      component,
      fix: 'Metadata holds strings, finite numbers, booleans, null, arrays and plain objects.',
    });
  }
  if (ancestors.has(value as object)) {
    throw new AxonError('INVALID_DOCUMENT', `${path} is circular: it contains itself.`, {
      component,
      fix: 'Metadata must be a tree of JSON values; copy the value instead of referring to an enclosing object.',
    });
  }
  if (depth >= MAX_METADATA_DEPTH) {
    throw new AxonError('INVALID_DOCUMENT', `${path} nests deeper than ${MAX_METADATA_DEPTH} levels.`, {
      component,
      fix: `Flatten the metadata: at most ${MAX_METADATA_DEPTH} levels of objects and arrays.`,
    });
  }
  ancestors.add(value as object);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) assertJsonValue(value[index], `${path}[${index}]`, component, depth + 1, ancestors);
  } else {
    for (const key of Object.keys(value as object)) assertJsonValue((value as Record<string, unknown>)[key], `${path}.${key}`, component, depth + 1, ancestors);
  }
  ancestors.delete(value as object);
}
