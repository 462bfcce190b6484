import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { createPieceDecoder, sniffContent, type ContentSniff, type TextEncodingName } from './text-encoding.ts';
import type { Loader, LoaderSource } from './types.ts';

export { sniffContent, type ContentSniff, type TextEncodingName } from './text-encoding.ts';

/** How many leading bytes decide whether a file is text and how it is encoded. */
const SNIFF_BYTES = 64 * 1024;

/** What reading a file for its loader found: its hash and encoding, and its bytes unless it is to be streamed. */
export type ReadResult =
  | { kind: 'read'; fileHash: string; sniff: ContentSniff | undefined; bytes: Uint8Array | undefined }
  | { kind: 'too-large'; reason: string };

/**
 * Read a file as much as its loader needs: whole (and then served from memory) when it is small or the
 * loader cannot stream; otherwise only hashed as a stream and sniffed from its head. Binary loaders get no
 * sniff. Throws the file system's error when the file cannot be read.
 */
export async function readForLoader(
  path: string,
  size: number,
  loader: Pick<Loader, 'name' | 'binary' | 'streaming'>,
  limits: { streamThresholdBytes: number; maxFileBytes: number },
  signal?: AbortSignal,
): Promise<ReadResult> {
  const whole = loader.binary || !loader.streaming || size <= limits.streamThresholdBytes;
  if (whole && size > limits.maxFileBytes) {
    return {
      kind: 'too-large',
      reason: `is ${formatBytes(size)}, over the ${formatBytes(limits.maxFileBytes)} limit for ${loader.name}, which cannot stream (maxFileBytes).`,
    };
  }
  if (whole) {
    const bytes = await readWholeFile(path, signal);
    const sniff = loader.binary ? undefined : sniffContent(bytes.subarray(0, SNIFF_BYTES), bytes.length <= SNIFF_BYTES);
    return { kind: 'read', fileHash: hashBytes(bytes), sniff, bytes };
  }
  const { hash, head } = await hashFileKeepingHead(path, signal);
  return { kind: 'read', fileHash: hash, sniff: sniffContent(head, false), bytes: undefined };
}

/** Sniff a file from its first bytes only, without reading the rest. */
export async function sniffFile(path: string, size: number): Promise<ContentSniff> {
  const handle = await open(path, 'r');
  try {
    const head = new Uint8Array(Math.min(size, SNIFF_BYTES));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return sniffContent(head.subarray(0, bytesRead), size <= SNIFF_BYTES);
  } finally {
    await handle.close();
  }
}

/** sha256 of the bytes, 32 hex characters. */
export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32);
}

/** sha256 of a file read as a stream (32 hex characters), and its first `SNIFF_BYTES` bytes from the same pass. */
async function hashFileKeepingHead(path: string, signal?: AbortSignal): Promise<{ hash: string; head: Uint8Array }> {
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headLength = 0;
  for await (const piece of createReadStream(path, { signal }) as AsyncIterable<Buffer>) {
    hash.update(piece);
    if (headLength < SNIFF_BYTES) {
      head.push(piece.subarray(0, SNIFF_BYTES - headLength));
      headLength += head[head.length - 1].length;
    }
  }
  return { hash: hash.digest('hex').slice(0, 32), head: Buffer.concat(head) };
}

/** Read a whole file once and serve every accessor from memory. */
export async function readWholeFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
  return new Uint8Array(await readFile(path, { signal }));
}

/**
 * Build the loader's view of a file. With `bytes` given, everything is served from memory; without, the
 * text accessors stream from disk (for files too large to hold).
 */
export function createLoaderSource(input: {
  path: string;
  sourceName: string;
  extension: string;
  size: number;
  encoding: TextEncodingName;
  bomLength: number;
  bytes?: Uint8Array;
  signal?: AbortSignal;
  /** See `LoaderSource.maxExtractedBytes`. */
  maxExtractedBytes?: number;
  warn: (message: string) => void;
}): LoaderSource {
  const { path, encoding, bomLength, signal } = input;
  const decodeAll = (bytes: Uint8Array) => createPieceDecoder(encoding).decode(bytes.subarray(bomLength));
  async function* textStream(): AsyncIterable<string> {
    if (input.bytes) {
      yield decodeAll(input.bytes);
      return;
    }
    const decoder = createPieceDecoder(encoding);
    for await (const piece of createReadStream(path, { start: bomLength, signal, highWaterMark: 256 * 1024 })) {
      const text = decoder.decode(piece as Buffer, { stream: true });
      if (text !== '') yield text;
    }
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  }
  return {
    path,
    sourceName: input.sourceName,
    extension: input.extension,
    size: input.size,
    signal,
    ...(input.maxExtractedBytes === undefined ? {} : { maxExtractedBytes: input.maxExtractedBytes }),
    bytes: async () => input.bytes ?? readWholeFile(path, signal),
    text: async () => {
      if (input.bytes) return decodeAll(input.bytes);
      return decodeAll(await readWholeFile(path, signal));
    },
    textStream,
    lines: () => splitLines(textStream()),
    warn: input.warn,
  };
}

/** A size for people: MiB from one mebibyte up, else KiB. */
export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

// --- Internal helpers ---

/**
 * Lines of a text given in pieces. The pieces of a line not yet ended are kept as they came and joined once, when
 * its end arrives, so a long line costs its own length, not its length times the number of pieces.
 */
async function* splitLines(pieces: AsyncIterable<string>): AsyncIterable<string> {
  let pending: string[] = [];
  for await (const piece of pieces) {
    let start = 0;
    let newline = piece.indexOf('\n');
    while (newline !== -1) {
      pending.push(piece.slice(start, newline));
      const line = pending.length === 1 ? pending[0] : pending.join('');
      pending = [];
      yield line.endsWith('\r') ? line.slice(0, -1) : line;
      start = newline + 1;
      newline = piece.indexOf('\n', start);
    }
    if (start < piece.length) pending.push(piece.slice(start));
  }
  const last = pending.join('');
  if (last !== '') yield last.endsWith('\r') ? last.slice(0, -1) : last;
}
