/**
 * Documents as the pgvector store's rows: checked before anything is written (text Postgres can hold, metadata
 * jsonb keeps exactly), encoded for one multi-row upsert, and decoded back with their exact float32 embeddings.
 */
import { assertJsonMetadata, type Document, type JsonValue } from '../../src/document.ts';
import { AxonError, ProviderError } from '../../src/errors.ts';
import { assertFloat32Vector, assertStorableDocument } from '../indexes/arguments.ts';
import type { TextTokenizer } from '../indexes/text-tokenizer.ts';
import { PGVECTOR_COMPONENT } from './pgvector-errors.ts';
import { isPostgresText } from './pgvector-filter.ts';
import { keywordColumns } from './pgvector-keyword.ts';

/** The columns of a document; the embedding as pgvector's binary form (exact float32, no text formatting on the server). */
export const DOCUMENT_COLUMNS = 'id, content, source_type, source_name, metadata, vector_send(embedding) AS embedding';
/** The same columns, of the table aliased `document`. */
export const ALIASED_DOCUMENT_COLUMNS =
  'document.id, document.content, document.source_type, document.source_name, document.metadata, vector_send(document.embedding) AS embedding';

/** A row as the driver returns it. */
export interface Row {
  id: string;
  content: string;
  source_type: string;
  source_name: string;
  metadata: Record<string, JsonValue>;
  embedding: Buffer;
  score?: number;
}

/** A document's values for the upsert. */
export interface PreparedRow {
  id: string;
  content: string;
  sourceType: string;
  sourceName: string;
  metadata: string;
  embedding: string;
  frequencies: string | null;
  length: number | null;
}

/**
 * Check every document and turn it into row values; throws on the first problem, before any write.
 * @throws AxonError `MISSING_EMBEDDINGS`, `DUPLICATE_ID`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`, `INVALID_DOCUMENT`
 */
export function prepareRows(
  documents: Document[],
  table: { name: string; dimensions: number | undefined; tokenizer: TextTokenizer | undefined },
): PreparedRow[] {
  const seen = new Set<string>();
  return documents.map((document, position) => {
    const where = `documents[${position}]`;
    assertStorableDocument(document, where, seen, PGVECTOR_COMPONENT);
    if (document.embedding === undefined || document.embedding === null) {
      throw new AxonError('MISSING_EMBEDDINGS', `${where} ("${document.id}") has no embedding.`, {
        component: PGVECTOR_COMPONENT,
        fix: 'Embed documents before adding them to a store.',
      });
    }
    const metadata: unknown = document.metadata ?? {};
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
      throw new AxonError('INVALID_DOCUMENT', `${where}.metadata must be a plain object of JSON values.`, {
        component: PGVECTOR_COMPONENT,
        fix: 'Give every document a metadata object ({} when it has none), or add through rag.addDocuments, which fills it in.',
      });
    }
    for (const field of ['id', 'content', 'sourceType', 'sourceName'] as const) assertText(document[field], `${where}.${field}`);
    // The check every store shares first (no cycle, bounded depth), so the walk for Postgres text below cannot overflow the stack.
    assertJsonMetadata(metadata, `${where}.metadata`, PGVECTOR_COMPONENT);
    assertPostgresJson(metadata, `${where}.metadata`);
    assertFloat32Vector(document.embedding, table.dimensions, {
      component: PGVECTOR_COMPONENT,
      label: `The embedding of ${where} ("${document.id}")`,
      container: 'table',
      name: table.name,
    });
    const keyword = table.tokenizer ? keywordColumns(table.tokenizer, document.content) : undefined;
    return {
      id: document.id,
      content: document.content,
      sourceType: document.sourceType,
      sourceName: document.sourceName,
      metadata: JSON.stringify(metadata),
      embedding: vectorLiteral(document.embedding),
      frequencies: keyword?.frequencies ?? null,
      length: keyword?.length ?? null,
    };
  });
}

/** The upsert of prepared rows, eight array parameters whatever their number (see `upsertParameters`); a re-added id replaces its row. */
export function upsertStatement(table: string, keyword: boolean): string {
  return (
    `INSERT INTO ${table} (id, content, source_type, source_name, metadata, embedding, keyword_lexemes, keyword_frequencies, keyword_length) ` +
    `SELECT given.id, given.content, given.source_type, given.source_name, given.metadata, given.embedding, ` +
    `${keyword ? 'array_to_tsvector(ARRAY(SELECT jsonb_object_keys(given.frequencies)))' : 'NULL'}, given.frequencies, given.length ` +
    `FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::vector[], $7::jsonb[], $8::integer[]) ` +
    `AS given(id, content, source_type, source_name, metadata, embedding, frequencies, length) ` +
    `ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, source_type = EXCLUDED.source_type, source_name = EXCLUDED.source_name, ` +
    `metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding, keyword_lexemes = EXCLUDED.keyword_lexemes, ` +
    `keyword_frequencies = EXCLUDED.keyword_frequencies, keyword_length = EXCLUDED.keyword_length`
  );
}

/** The parameters of `upsertStatement`: one array per column. */
export function upsertParameters(rows: PreparedRow[]): unknown[] {
  return [
    rows.map((row) => row.id),
    rows.map((row) => row.content),
    rows.map((row) => row.sourceType),
    rows.map((row) => row.sourceName),
    rows.map((row) => row.metadata),
    rows.map((row) => row.embedding),
    rows.map((row) => row.frequencies),
    rows.map((row) => row.length),
  ];
}

/** A row read back as a document, its embedding decoded from pgvector's binary form. */
export function toDocument(row: Row, table: string): Document {
  return {
    id: row.id,
    content: row.content,
    sourceType: row.source_type,
    sourceName: row.source_name,
    score: typeof row.score === 'number' ? row.score : Number(row.score ?? 0),
    metadata: row.metadata ?? {},
    embedding: decodeVector(row.embedding, table),
  };
}

/** pgvector's text form, `[1,2,3]`; float32 values print exactly through their float64 value. */
export function vectorLiteral(vector: ArrayLike<number>): string {
  return `[${Array.from(vector, (value) => String(Math.fround(value))).join(',')}]`;
}

// --- Internal helpers ---

/** pgvector's binary form (`vector_send`): uint16 dimensions, uint16 unused, then big-endian float32s. */
function decodeVector(bytes: Buffer, table: string): number[] {
  const dimensions = bytes.length >= 4 ? bytes.readUInt16BE(0) : -1;
  if (dimensions < 0 || bytes.length !== 4 + dimensions * 4) {
    throw new ProviderError(`PostgreSQL returned an embedding of table "${table}" in an unexpected binary form.`, {
      provider: PGVECTOR_COMPONENT,
      code: 'PROVIDER_RESPONSE_INVALID',
      fix: 'Check the pgvector version (0.8 or later).',
    });
  }
  const vector = new Array<number>(dimensions);
  for (let index = 0; index < dimensions; index++) vector[index] = bytes.readFloatBE(4 + index * 4);
  return vector;
}

function assertText(value: string, path: string): void {
  if (isPostgresText(value)) return;
  throw new AxonError('INVALID_DOCUMENT', `${path} holds a NUL character or an unpaired UTF-16 surrogate, which Postgres text cannot store.`, {
    component: PGVECTOR_COMPONENT,
    fix: 'Remove such characters before adding the document.',
  });
}

/** Metadata travels as jsonb: a string it cannot hold exactly (a NUL character, a lone surrogate), as a value or a key, is refused, not altered. */
function assertPostgresJson(value: unknown, path: string): void {
  if (typeof value === 'string') assertText(value, path);
  else if (Array.isArray(value)) value.forEach((item, index) => assertPostgresJson(item, `${path}[${index}]`));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      assertText(key, `${path} key "${key}"`);
      assertPostgresJson(item, `${path}.${key}`);
    }
  }
}
