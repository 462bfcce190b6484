/**
 * The behaviour every `Loader` must have, as one suite each implementation runs:
 *
 * ```ts
 * describeLoaderConformance('text-loader', {
 *   create: () => new TextLoader(),
 *   extension: 'txt',
 *   encode: (paragraphs) => paragraphs.join('\n\n'),
 * });
 * ```
 *
 * The files are built in memory (no fixtures on disk) and served through an in-memory `LoaderSource` that
 * decodes UTF-8, invalid bytes becoming U+FFFD (ingestion itself reads invalid UTF-8 as Windows-1252; a loader
 * must survive either). `encode` writes a valid file of the format holding the given paragraphs (short
 * sentences of plain words); a format a test cannot write skips the cases that need it, with the reason.
 */
import { describe, expect } from 'vitest';
import type { LoadedDocument, Loader, LoaderSource } from '../src/contracts/loader.ts';
import { conformanceCases, type ConformanceSkip } from './skip.ts';

export interface LoaderConformanceSubject {
  create: () => Loader;
  /** The extension the loader is registered for, lower-case without the dot. */
  extension: string;
  /** A valid file of the format holding `paragraphs`, in order. Leave out when a test cannot write the format. */
  encode?: (paragraphs: string[]) => string | Uint8Array;
}

export interface LoaderConformanceOptions {
  /** Cases (the `it` titles) this loader cannot run, each group with its reason. */
  skip?: ConformanceSkip[];
  /** Size of the huge file in bytes. @default 6 MiB, over the text loader's 1 MiB block and ingestion's 4 MiB stream threshold */
  hugeBytes?: number;
}

/** What was read from a source, and whether the loader asked for the whole file. */
interface Loaded {
  documents: LoadedDocument[];
  warnings: string[];
  wholeFileReads: number;
}

const PIECE_BYTES = 64 * 1024;
/** ASCII every format writes as is; the bad-encoding case replaces its bytes with invalid UTF-8. */
const PLACEHOLDER = 'QQINVALIDQQ';

/** A `LoaderSource` over bytes in memory, decoded as UTF-8 (invalid bytes become U+FFFD). */
export function memorySource(
  bytes: Uint8Array,
  extension: string,
  options: { signal?: AbortSignal } = {},
): LoaderSource & { warnings: string[]; wholeFileReads: () => number } {
  const warnings: string[] = [];
  let wholeFileReads = 0;
  const decode = (part: Uint8Array, decoder = new TextDecoder('utf-8')) => decoder.decode(part, { stream: false });
  async function* textStream(): AsyncIterable<string> {
    const decoder = new TextDecoder('utf-8');
    for (let offset = 0; offset < bytes.length; offset += PIECE_BYTES) {
      const text = decoder.decode(bytes.subarray(offset, offset + PIECE_BYTES), { stream: true });
      if (text !== '') yield text;
    }
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  }
  async function* lines(): AsyncIterable<string> {
    let pending = '';
    for await (const piece of textStream()) {
      pending += piece;
      const parts = pending.split('\n');
      pending = parts.pop()!;
      for (const part of parts) yield part.endsWith('\r') ? part.slice(0, -1) : part;
    }
    if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending;
  }
  return {
    path: `/conformance/file.${extension}`,
    sourceName: `file.${extension}`,
    extension,
    size: bytes.length,
    signal: options.signal,
    bytes: async () => {
      wholeFileReads += 1;
      return bytes;
    },
    text: async () => {
      wholeFileReads += 1;
      return decode(bytes);
    },
    textStream,
    lines,
    warn: (message) => void warnings.push(message),
    warnings,
    wholeFileReads: () => wholeFileReads,
  };
}

/** A marker word unlike any other (no digits, so no tokenizer splits it), for paragraph `index`. */
function marker(index: number): string {
  let word = '';
  let rest = index;
  do {
    word = String.fromCharCode(97 + (rest % 26)) + word;
    rest = Math.floor(rest / 26);
  } while (rest > 0);
  return `zq${word}marker`;
}

function paragraphs(count: number, words = 8): string[] {
  return Array.from({ length: count }, (_, index) => `Paragraph ${marker(index)} says ${'plain words '.repeat(words).trim()}.`);
}

function bytesOf(file: string | Uint8Array): Uint8Array {
  return typeof file === 'string' ? new TextEncoder().encode(file) : file;
}

function expectWellFormed(documents: LoadedDocument[]): void {
  for (const document of documents) {
    expect(typeof document.content).toBe('string');
    expect(document.metadata !== null && typeof document.metadata === 'object' && !Array.isArray(document.metadata)).toBe(true);
    expect(JSON.parse(JSON.stringify(document.metadata))).toEqual(document.metadata);
  }
}

export function describeLoaderConformance(name: string, subject: LoaderConformanceSubject, options: LoaderConformanceOptions = {}): void {
  const needsEncoder: ConformanceSkip[] = subject.encode
    ? []
    : [
        {
          reason: `no encoder for .${subject.extension} files in the test`,
          tests: [
            'yields the text of a valid file, with JSON metadata',
            'reads a huge file without losing text (streaming loaders through lines() or textStream() only)',
            'survives bad encoding: replacement characters keep the readable text',
          ],
        },
      ];
  const { test, assertAllKnown } = conformanceCases([...needsEncoder, ...(options.skip ?? [])]);
  const encode = (texts: string[]) => bytesOf(subject.encode!(texts));
  const load = async (bytes: Uint8Array): Promise<Loaded> => {
    const source = memorySource(bytes, subject.extension);
    const documents: LoadedDocument[] = [];
    for await (const document of subject.create().load(source)) documents.push(document);
    return { documents, warnings: source.warnings, wholeFileReads: source.wholeFileReads() };
  };
  /** Resolves to what was loaded, or to the Error it rejected with; anything else thrown fails the case. */
  const settle = async (bytes: Uint8Array): Promise<Loaded | Error> => {
    try {
      return await load(bytes);
    } catch (error) {
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message.trim()).not.toBe('');
      return error as Error;
    }
  };
  const textOf = (loaded: Loaded) => loaded.documents.map((document) => document.content).join('\n');

  describe(`${name}: Loader conformance`, () => {
    test('has a kebab-case name', () => {
      expect(subject.create().name).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
    });

    test('yields the text of a valid file, with JSON metadata', async () => {
      const texts = paragraphs(5);
      const loaded = await load(encode(texts));
      expectWellFormed(loaded.documents);
      const text = textOf(loaded);
      for (let index = 0; index < texts.length; index++) expect(text).toContain(marker(index));
    });

    test('an empty or blank file yields no text, or rejects with an Error saying why', async () => {
      for (const file of ['', '   \n\n\t\n']) {
        const result = await settle(bytesOf(file));
        if (result instanceof Error) continue;
        expectWellFormed(result.documents);
        expect(textOf(result).trim()).toBe('');
      }
    });

    test('binary content yields well-formed documents or rejects with an Error, and never hangs', async () => {
      let state = 0x2545f491;
      const noise = Uint8Array.from({ length: 64 * 1024 }, (_, index) => {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        return index % 97 === 0 ? 0 : state & 0xff;
      });
      const result = await settle(noise);
      if (!(result instanceof Error)) expectWellFormed(result.documents);
      // A loader that declares binary input must recognise that noise is not its format.
      if (subject.create().binary) expect(result).toBeInstanceOf(Error);
    });

    test('reads a huge file without losing text (streaming loaders through lines() or textStream() only)', async () => {
      const target = options.hugeBytes ?? 6 * 1024 * 1024;
      const sample = paragraphs(1, 40)[0];
      const count = Math.ceil(target / (sample.length + 2));
      const texts = paragraphs(count, 40);
      const bytes = encode(texts);
      expect(bytes.length).toBeGreaterThanOrEqual(target * 0.9);
      const loaded = await load(bytes);
      expectWellFormed(loaded.documents);
      if (subject.create().streaming) expect(loaded.wholeFileReads).toBe(0);
      const text = textOf(loaded);
      for (const index of [0, Math.floor(count / 3), Math.floor(count / 2), count - 2, count - 1]) expect(text).toContain(marker(index));
    }, 60_000);

    test('survives bad encoding: replacement characters keep the readable text', async () => {
      const texts = paragraphs(4);
      // Invalid UTF-8 (a lone continuation byte, a truncated sequence, 0xFF) inside the second paragraph's words.
      texts[1] = texts[1].replace('says', `sa${PLACEHOLDER}ys`);
      const encoded = encode(texts);
      const placeholder = new TextEncoder().encode(PLACEHOLDER);
      const at = indexOfBytes(encoded, placeholder);
      expect(at).toBeGreaterThanOrEqual(0);
      const broken = new Uint8Array(encoded.length - placeholder.length + 3);
      broken.set(encoded.subarray(0, at));
      broken.set([0x80, 0xc3, 0xff], at);
      broken.set(encoded.subarray(at + placeholder.length), at + 3);
      const loaded = await load(broken);
      expectWellFormed(loaded.documents);
      const text = textOf(loaded);
      for (let index = 0; index < texts.length; index++) expect(text).toContain(marker(index));
    });

    assertAllKnown(`${name}: Loader conformance`);
  });
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let start = 0; start + needle.length <= haystack.length; start++) {
    for (let offset = 0; offset < needle.length; offset++) if (haystack[start + offset] !== needle[offset]) continue outer;
    return start;
  }
  return -1;
}
