import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { DocumentInput, JsonValue } from '../document.ts';
import { AxonError, throwIfAborted } from '../errors.ts';
import type { Qrels } from './metrics.ts';

/** One passage of a BEIR corpus. */
export interface BeirDocument {
  id: string;
  title: string;
  text: string;
  metadata: Record<string, JsonValue>;
}

/** One BEIR query. */
export interface BeirQuery {
  id: string;
  text: string;
  metadata: Record<string, JsonValue>;
}

/** A BEIR dataset, reduced to what an evaluation uses. */
export interface BeirDataset {
  /** The folder's name, e.g. `scifact`. */
  name: string;
  /** Absolute path of the folder. */
  folder: string;
  /** The qrels split, e.g. `test`. */
  split: string;
  corpus: BeirDocument[];
  /** Only the queries judged in the split, in `queries.jsonl` order. */
  queries: BeirQuery[];
  /** query id → (document id → grade). */
  qrels: Qrels;
  /** Oddities that do not stop an evaluation, such as judged documents missing from the corpus. */
  warnings: string[];
}

export interface LoadBeirOptions {
  /** Which `qrels/<split>.tsv` to read. @default 'test' */
  split?: string;
  signal?: AbortSignal;
}

const NAME = 'beir-loader';
const LAYOUT = 'A BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv (query-id, corpus-id, score, with a header line).';

/**
 * Load a BEIR-format folder: `corpus.jsonl` (`{_id, title, text, metadata}`), `queries.jsonl`
 * (`{_id, text, metadata}`) and `qrels/<split>.tsv` (tab-separated `query-id corpus-id score` under a header).
 * Only queries that appear in the qrels are returned.
 *
 * @throws AxonError `NOT_FOUND` when a file is missing, `INVALID_INPUT` naming file and line when one is
 * malformed, `DUPLICATE_ID` when an id repeats.
 */
export async function loadBeir(folder: string, options: LoadBeirOptions = {}): Promise<BeirDataset> {
  const split = options.split ?? 'test';
  const root = resolve(folder);
  await requireFile(root, 'folder');
  const corpusPath = join(root, 'corpus.jsonl');
  const queriesPath = join(root, 'queries.jsonl');
  const qrelsPath = join(root, 'qrels', `${split}.tsv`);
  for (const path of [corpusPath, queriesPath, qrelsPath]) await requireFile(path, 'file');

  const qrels = await readQrels(qrelsPath, options.signal);
  const corpus: BeirDocument[] = [];
  const corpusIds = new Set<string>();
  await readJsonLines(corpusPath, options.signal, (record, where) => {
    const id = requireId(record, where);
    if (corpusIds.has(id)) throw duplicate(id, where);
    corpusIds.add(id);
    corpus.push({
      id,
      title: optionalString(record.title, where, 'title'),
      text: optionalString(record.text, where, 'text'),
      metadata: metadataOf(record, where),
    });
  });

  const queries: BeirQuery[] = [];
  const queryIds = new Set<string>();
  await readJsonLines(queriesPath, options.signal, (record, where) => {
    const id = requireId(record, where);
    if (queryIds.has(id)) throw duplicate(id, where);
    queryIds.add(id);
    if (!qrels.has(id)) return;
    const text = optionalString(record.text, where, 'text');
    if (text.trim() === '') throw malformed(`${where}: query ${id} has no text.`);
    queries.push({ id, text, metadata: metadataOf(record, where) });
  });

  const missingQueries = [...qrels.keys()].filter((id) => !queryIds.has(id));
  if (missingQueries.length > 0) {
    throw malformed(
      `${qrelsPath} judges ${missingQueries.length} quer${missingQueries.length === 1 ? 'y' : 'ies'} absent from queries.jsonl (${preview(missingQueries)}).`,
    );
  }
  const warnings: string[] = [];
  const missingDocuments = new Set<string>();
  for (const judgments of qrels.values()) for (const id of judgments.keys()) if (!corpusIds.has(id)) missingDocuments.add(id);
  if (missingDocuments.size > 0)
    warnings.push(
      `${missingDocuments.size} judged document(s) are not in corpus.jsonl (${preview([...missingDocuments])}); they count as relevant but can never be retrieved.`,
    );
  return { name: basename(root), folder: root, split, corpus, queries, qrels, warnings };
}

/** The text a retriever indexes for a BEIR passage: `title + " " + text`, as the published baselines do. */
export function beirDocumentText(document: Pick<BeirDocument, 'title' | 'text'>): string {
  return document.title ? `${document.title} ${document.text}` : document.text;
}

/**
 * The documents a retriever indexes for a BEIR corpus: each passage's `beirDocumentText`, its id, and its title kept
 * in metadata too (the agentic offline planner reads bridge entities from it). Passages with neither title nor
 * text are left out and counted in `empty`.
 */
export function beirDocuments(dataset: Pick<BeirDataset, 'name' | 'corpus'>): { documents: DocumentInput[]; empty: number } {
  const documents: DocumentInput[] = [];
  let empty = 0;
  for (const document of dataset.corpus) {
    const content = beirDocumentText(document);
    if (content.trim() === '') {
      empty++;
      continue;
    }
    const metadata = document.title ? { ...document.metadata, title: document.title } : document.metadata;
    documents.push({ id: document.id, content, sourceType: 'beir', sourceName: dataset.name, metadata });
  }
  return { documents, empty };
}

// --- Internal helpers ---

async function requireFile(path: string, kind: 'folder' | 'file'): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  const ok = info !== undefined && (kind === 'folder' ? info.isDirectory() : info.isFile());
  if (!ok) {
    throw new AxonError('NOT_FOUND', `No BEIR ${kind} at ${path}.`, { component: NAME, fix: LAYOUT, details: { path } });
  }
}

async function readLines(path: string, signal: AbortSignal | undefined, visit: (line: string, where: string) => void): Promise<void> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      if (number % 10_000 === 0) throwIfAborted(signal, NAME);
      if (line.trim() === '') continue;
      visit(line, `${path}:${number}`);
    }
  } finally {
    lines.close();
  }
}

async function readJsonLines(path: string, signal: AbortSignal | undefined, visit: (record: Record<string, unknown>, where: string) => void): Promise<void> {
  await readLines(path, signal, (line, where) => {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw malformed(`${where} is not valid JSON (${(error as Error).message}).`, error);
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) throw malformed(`${where} is not a JSON object.`);
    visit(record as Record<string, unknown>, where);
  });
}

async function readQrels(path: string, signal: AbortSignal | undefined): Promise<Map<string, Map<string, number>>> {
  const qrels = new Map<string, Map<string, number>>();
  let first = true;
  await readLines(path, signal, (line, where) => {
    const columns = line.split('\t').map((column) => column.trim());
    const isHeader = first && columns.length >= 3 && !Number.isFinite(Number(columns[2]));
    first = false;
    if (isHeader) return;
    if (columns.length !== 3 || columns[0] === '' || columns[1] === '' || columns[2] === '' || !Number.isFinite(Number(columns[2]))) {
      throw malformed(`${where} is not "query-id<TAB>corpus-id<TAB>score": ${JSON.stringify(line.slice(0, 80))}.`);
    }
    const [queryId, documentId, score] = columns;
    let judgments = qrels.get(queryId);
    if (judgments === undefined) qrels.set(queryId, (judgments = new Map()));
    judgments.set(documentId, Number(score));
  });
  if (qrels.size === 0) throw malformed(`${path} holds no judgments.`);
  return qrels;
}

function requireId(record: Record<string, unknown>, where: string): string {
  const id = record._id;
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  throw malformed(`${where} has no "_id".`);
}

function optionalString(value: unknown, where: string, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw malformed(`${where}: "${field}" must be a string.`);
  return value;
}

function metadataOf(record: Record<string, unknown>, where: string): Record<string, JsonValue> {
  const metadata = record.metadata;
  if (metadata === undefined || metadata === null) return {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw malformed(`${where}: "metadata" must be an object.`);
  return metadata as Record<string, JsonValue>;
}

function preview(ids: string[]): string {
  return ids.length <= 5 ? ids.join(', ') : `${ids.slice(0, 5).join(', ')}, …`;
}

function malformed(message: string, cause?: unknown): AxonError {
  return new AxonError('INVALID_INPUT', `Malformed BEIR data: ${message}`, { component: NAME, fix: LAYOUT, cause, details: { argument: 'folder' } });
}

function duplicate(id: string, where: string): AxonError {
  return new AxonError('DUPLICATE_ID', `Malformed BEIR data: ${where} repeats the id "${id}".`, {
    component: NAME,
    fix: 'Each _id must appear once per file.',
    details: { id },
  });
}
