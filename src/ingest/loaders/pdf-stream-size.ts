import { Readable, type Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pdfDecryption } from './pdf-decryption.ts';
import { createPdfDecoder, pdfFilterKind, type PdfFilterKind } from './pdf-filters.ts';

/** What undoing every stream's filters in a PDF came to. */
export interface PdfStreamSize {
  /** Bytes the streams decode to, counted until `limit` was passed. */
  decodedBytes: number;
  streams: number;
  /**
   * `none`: no `/Encrypt` entry. `decrypted`: encrypted by the standard security handler with an empty user password
   * (a file that opens without asking), and each stream was counted decrypted too. `unreadable`: encrypted in a way
   * not undone here (another handler, a real password), so its encrypted streams count as the little their
   * ciphertext inflates to. Every stream is also counted as it is written, so a false `/Encrypt` hides nothing.
   */
  encryption: 'none' | 'decrypted' | 'unreadable';
  /** The streams decode to more than `limit` bytes (counting stopped there). */
  overLimit: boolean;
}

/**
 * Count the bytes a PDF's streams decode to, stopping once `limit` is passed, without holding the decoded bytes:
 * each stream's filters are undone as a stream into a counter. A PDF reader inflates a page's content stream
 * whole, so a half-megabyte file can ask for gigabytes; this finds out first, for the cost of inflating up to
 * `limit` bytes once.
 *
 * Every object written as `<<…>> stream … endstream` is counted, images included, since a stream's dictionary
 * can lie about what the stream is. Filters that are not undone here (image codecs, `Crypt`) count as the bytes
 * they are given. A stream's end is its `/Length` when that checks out; otherwise its data runs to where its first
 * filter stops (deflate, LZW and the others mark their own end), so a false `endstream` inside the data hides
 * nothing.
 */
export async function measurePdfStreams(bytes: Uint8Array, limit: number, signal?: AbortSignal): Promise<PdfStreamSize> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const encrypted = buffer.includes('/Encrypt');
  const decryption = encrypted ? pdfDecryption(buffer) : undefined;
  const result: PdfStreamSize = { decodedBytes: 0, streams: 0, encryption: !encrypted ? 'none' : decryption ? 'decrypted' : 'unreadable', overLimit: false };
  let from = 0;
  for (;;) {
    const keyword = buffer.indexOf('stream', from, 'latin1');
    if (keyword === -1) break;
    from = keyword + 6;
    const stream = locateStream(buffer, keyword);
    if (stream === undefined) continue;
    signal?.throwIfAborted();
    result.streams += 1;
    from = Math.max(from, stream.end ?? stream.start);
    const data = buffer.subarray(stream.start, stream.end ?? buffer.length);
    const budget = limit - result.decodedBytes;
    let size = await decodedSize(data, stream.filters, budget, stream.earlyChange);
    // Cross-reference streams are never encrypted; every other stream of an encrypted file may be.
    const object = stream.object;
    if (decryption && object && size <= budget && !/\/Type\s*\/XRef\b/.test(stream.dictionary)) {
      size = Math.max(size, await decodedSize(data, stream.filters, budget, stream.earlyChange, decryption.decipher(object.number, object.generation)));
    }
    result.decodedBytes += size;
    if (result.decodedBytes > limit) {
      result.overLimit = true;
      break;
    }
  }
  return result;
}

// --- Internal helpers ---

/** The most bytes looked back from `stream` for its dictionary. */
const DICTIONARY_REACH = 64 * 1024;
/** Input is handed to the decoders in pieces of this size, so no decoder has much output waiting. */
const INPUT_PIECE = 16 * 1024;

interface LocatedStream {
  dictionary: string;
  /** The object the stream is, from the `N G obj` before its dictionary (decryption keys depend on it). */
  object: { number: number; generation: number } | undefined;
  start: number;
  /** Where the data ends, when `/Length` says so and is right; else undefined (the filters find the end). */
  end: number | undefined;
  filters: (PdfFilterKind | undefined)[];
  earlyChange: number;
}

/** The stream whose `stream` keyword is at `keyword`, or undefined when it is not one (text that reads "stream"). */
function locateStream(buffer: Buffer, keyword: number): LocatedStream | undefined {
  if (keyword >= 3 && buffer.toString('latin1', keyword - 3, keyword) === 'end') return undefined;
  let start = keyword + 6;
  if (buffer[start] === 0x0d) start += 1;
  if (buffer[start] === 0x0a) start += 1;
  else if (buffer[start - 1] !== 0x0d) return undefined;
  const found = dictionaryBefore(buffer, keyword);
  if (found === undefined) return undefined;
  const { dictionary, at } = found;
  const header = /(\d+)\s+(\d+)\s+obj\s*$/.exec(buffer.toString('latin1', Math.max(0, at - 48), at));
  return {
    dictionary,
    object: header ? { number: Number(header[1]), generation: Number(header[2]) } : undefined,
    start,
    end: checkedEnd(buffer, start, dictionary),
    filters: filtersOf(dictionary),
    earlyChange: /\/EarlyChange\s+0\b/.test(dictionary) ? 0 : 1,
  };
}

/** The `<<…>>` dictionary that ends right before `at` (white space between), as text, and where it starts. */
function dictionaryBefore(buffer: Buffer, at: number): { dictionary: string; at: number } | undefined {
  let end = at - 1;
  while (end >= 0 && isWhiteSpace(buffer[end])) end -= 1;
  if (end < 1 || buffer[end] !== 0x3e || buffer[end - 1] !== 0x3e) return undefined;
  let depth = 0;
  const lowest = Math.max(0, end - DICTIONARY_REACH);
  for (let index = end; index > lowest; index--) {
    if (buffer[index] === 0x3e && buffer[index - 1] === 0x3e) {
      depth += 1;
      index -= 1;
    } else if (buffer[index] === 0x3c && buffer[index - 1] === 0x3c) {
      depth -= 1;
      index -= 1;
      if (depth === 0) return { dictionary: buffer.toString('latin1', index, end + 1), at: index };
    }
  }
  return undefined;
}

/** The data's end from a direct `/Length`, when `endstream` follows it there. */
function checkedEnd(buffer: Buffer, start: number, dictionary: string): number | undefined {
  const length = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dictionary);
  if (!length) return undefined;
  const end = start + Number(length[1]);
  if (end > buffer.length) return undefined;
  let after = end;
  while (after < buffer.length && isWhiteSpace(buffer[after])) after += 1;
  return buffer.toString('latin1', after, after + 9) === 'endstream' ? end : undefined;
}

/** The filters of a stream in the order they are undone; undefined for one not undone here. */
function filtersOf(dictionary: string): (PdfFilterKind | undefined)[] {
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[^\s/<>[\]()]+)/.exec(dictionary);
  if (!filter) return [];
  return [...filter[1].matchAll(/\/([^\s/<>[\]()]+)/g)].map((name) => pdfFilterKind(name[1]));
}

/**
 * Bytes `data` decodes to through `filters`, counting at most `budget + 1` before stopping. Without a filter
 * to undo, the stream is as large as its data (up to its end, or the next `endstream` when its length is unknown).
 */
async function decodedSize(data: Buffer, filters: (PdfFilterKind | undefined)[], budget: number, earlyChange: number, decipher?: Transform): Promise<number> {
  const undone = filters.indexOf(undefined);
  const chain = (undone === -1 ? filters : filters.slice(0, undone)) as PdfFilterKind[];
  if (chain.length === 0) {
    if (decipher) return 0;
    const end = data.indexOf('endstream', 0, 'latin1');
    return end === -1 ? data.length : end;
  }
  let counted = 0;
  const counter = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      counted += chunk.length;
      callback(counted > budget ? new BudgetSpent() : undefined);
    },
  });
  const decoders = chain.map((kind) => createPdfDecoder(kind, earlyChange));
  // Once the first decoder has met its end-of-data mark, the rest of `data` is not this stream's.
  async function* input(): AsyncIterable<Buffer> {
    for (let at = 0; at < data.length && !decoders[0].readableEnded; at += INPUT_PIECE) yield data.subarray(at, at + INPUT_PIECE);
  }
  try {
    await pipeline([Readable.from(input(), { objectMode: false }), ...(decipher ? [decipher] : []), ...decoders, counter]);
  } catch {
    // Over budget, or data a decoder cannot read (a reader stops there too): what was counted stands.
  }
  return counted;
}

class BudgetSpent extends Error {}

function isWhiteSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00;
}
