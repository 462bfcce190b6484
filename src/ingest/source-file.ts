import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Loader, LoaderSource } from './types.ts';

/** How a file's bytes become text. */
export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** The verdict of looking at a file's first bytes. */
export type ContentSniff = { binary: true; reason: string } | { binary: false; encoding: TextEncodingName; bomLength: number };

/** How many leading bytes decide whether a file is text and how it is encoded. */
const SNIFF_BYTES = 64 * 1024;

/**
 * Decide whether bytes are text, and in which encoding. A byte-order mark wins. Otherwise a NUL byte means
 * binary; valid UTF-8 is UTF-8; invalid UTF-8 with few control characters is read as Windows-1252 (the
 * usual legacy encoding of Western text), and with many it is binary.
 */
export function sniffContent(sample: Uint8Array, complete: boolean): ContentSniff {
  if (sample[0] === 0xef && sample[1] === 0xbb && sample[2] === 0xbf) return { binary: false, encoding: 'utf-8', bomLength: 3 };
  if (sample[0] === 0xff && sample[1] === 0xfe) return { binary: false, encoding: 'utf-16le', bomLength: 2 };
  if (sample[0] === 0xfe && sample[1] === 0xff) return { binary: false, encoding: 'utf-16be', bomLength: 2 };
  if (sample.includes(0)) return { binary: true, reason: 'contains NUL bytes, so it is binary despite its extension' };
  if (isValidUtf8(sample, complete)) return { binary: false, encoding: 'utf-8', bomLength: 0 };
  let control = 0;
  for (const byte of sample) if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) || byte === 0x7f) control++;
  if (sample.length > 0 && control / sample.length > 0.01) {
    return {
      binary: true,
      reason: `is not valid UTF-8 and ${((control / sample.length) * 100).toFixed(1)}% of its first bytes are control characters, so it is binary`,
    };
  }
  return { binary: false, encoding: 'windows-1252', bomLength: 0 };
}

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
  warn: (message: string) => void;
}): LoaderSource {
  const { path, encoding, bomLength, signal } = input;
  const decodeAll = (bytes: Uint8Array) => new TextDecoder(encoding).decode(bytes.subarray(bomLength));
  async function* textStream(): AsyncIterable<string> {
    if (input.bytes) {
      yield decodeAll(input.bytes);
      return;
    }
    const decoder = new TextDecoder(encoding);
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

// --- Internal helpers ---

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

async function* splitLines(pieces: AsyncIterable<string>): AsyncIterable<string> {
  let pending = '';
  for await (const piece of pieces) {
    pending += piece;
    let newline = pending.indexOf('\n');
    let start = 0;
    while (newline !== -1) {
      const end = newline > start && pending[newline - 1] === '\r' ? newline - 1 : newline;
      yield pending.slice(start, end);
      start = newline + 1;
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending;
}

function isValidUtf8(bytes: Uint8Array, complete: boolean): boolean {
  try {
    // In stream mode a character cut at the end of an incomplete sample is held back, not reported as invalid.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !complete });
    return true;
  } catch {
    return false;
  }
}
