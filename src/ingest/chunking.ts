import { createHash } from 'node:crypto';
import { contentHash, normalizeDocument, type Document, type JsonValue } from '../document.ts';
import { MarkdownSplitter } from './splitters/markdown-splitter.ts';
import { RecursiveSplitter, type ResolvedSplitterOptions } from './splitters/recursive-splitter.ts';
import type { LoadedDocument } from './types.ts';

/** A chunk before it knows its place in the file. */
export interface ChunkDraft {
  content: string;
  metadata: Record<string, JsonValue>;
}

/**
 * Bump when a change to loading or splitting makes old chunks differ from what a fresh run would produce,
 * so unchanged files are re-ingested once after an upgrade.
 */
const CHUNKING_VERSION = 1;

/** Splits loaded documents into chunk drafts with the splitter their format calls for. */
export class Chunker {
  private readonly recursive: RecursiveSplitter;
  private readonly markdown: MarkdownSplitter;

  constructor(readonly options: ResolvedSplitterOptions) {
    this.recursive = new RecursiveSplitter(options);
    this.markdown = new MarkdownSplitter(options);
  }

  async *chunk(documents: AsyncIterable<LoadedDocument>): AsyncIterable<ChunkDraft> {
    for await (const document of documents) {
      if (document.markdown) {
        for (const piece of this.markdown.split(document.content)) {
          yield { content: piece.content, metadata: { ...document.metadata, headingPath: piece.headingPath } };
        }
      } else {
        for (const content of this.recursive.split(document.content)) yield { content, metadata: document.metadata };
      }
    }
  }
}

/**
 * A fingerprint of everything besides the file's bytes that decides what is stored: chunking settings,
 * loader settings and the embeddings model. A file is unchanged only when its hash and this both match.
 */
export function ingestFingerprint(parts: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify({ version: CHUNKING_VERSION, ...parts }))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Turn a draft into a stored document with a stable id (source, chunk index and content; see
 * `defaultDocumentId`). The keys set here win over a loader's or front matter's field of the same name.
 */
export function buildChunkDocument(input: {
  draft: ChunkDraft;
  chunkIndex: number;
  chunkCount: number;
  sourceType: string;
  sourceName: string;
  fileHash: string;
  fingerprint: string;
  fileType: string;
}): Document {
  const metadata: Record<string, JsonValue> = {
    ...input.draft.metadata,
    fileType: input.fileType,
    chunkIndex: input.chunkIndex,
    chunkCount: input.chunkCount,
    contentHash: contentHash(input.draft.content),
    fileHash: input.fileHash,
    ingestFingerprint: input.fingerprint,
  };
  return normalizeDocument({ content: input.draft.content, sourceType: input.sourceType, sourceName: input.sourceName, metadata }, input.chunkIndex, 'ingest');
}

/**
 * True when what the store holds for a source is complete and was made from these bytes with these
 * settings: every chunk carries the same file hash and fingerprint, and there are exactly `chunkCount` of them
 * (fewer means an earlier run was interrupted half-way through the file).
 */
export function isUnchanged(stored: readonly Document[], fileHash: string, fingerprint: string): boolean {
  if (stored.length === 0) return false;
  const indexes = new Set<number>();
  for (const document of stored) {
    const { fileHash: storedHash, ingestFingerprint: storedFingerprint, chunkCount, chunkIndex } = document.metadata;
    if (storedHash !== fileHash || storedFingerprint !== fingerprint || chunkCount !== stored.length || typeof chunkIndex !== 'number') return false;
    indexes.add(chunkIndex);
  }
  return indexes.size === stored.length;
}
