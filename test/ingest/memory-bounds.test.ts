/**
 * Files built to exhaust memory, ingested by a child process whose peak resident set size is read back
 * (memory-child.ts: a store and an embedder that keep nothing, so the figure is ingestion's own). The bounds are
 * generous — several times what the child needs — and are about memory, never time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestPaths } from '../../src/ingest/index.ts';
import { PdfLoader } from '../../src/ingest/loaders/pdf-loader.ts';
import { measurePdfStreams } from '../../src/ingest/loaders/pdf-stream-size.ts';
import { createLoaderSource } from '../../src/ingest/source-file.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { buildEncryptedPdf, buildPdf, writeJsonlRecords, writePdfBomb, writeSingleLineText } from '../helpers/hostile-files.ts';
import { runMeasured } from '../helpers/peak-rss.ts';
import { FakeEmbeddings } from './fakes.ts';

const MEBIBYTE = 1024 * 1024;
const CHILD = new URL('./memory-child.ts', import.meta.url).pathname;

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'axon-memory-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

interface ChildResult {
  summary: { ok: boolean; filesIngested: number; skipped: { path: string; code: string; reason: string }[]; warnings: unknown[] };
  stored: { documents: number; characters: number };
}

async function ingestInChild(file: string, options: Record<string, unknown> = {}): Promise<{ result: ChildResult; peakMiB: number }> {
  const measured = await runMeasured(CHILD, [file, JSON.stringify(options)], { cwd: folder });
  expect(measured.code, measured.stderr).toBe(0);
  return { result: JSON.parse(measured.stdout) as ChildResult, peakMiB: measured.peakRssBytes / MEBIBYTE };
}

describe('maxExtractedBytes: a PDF that inflates a thousandfold', () => {
  it('is skipped as too-large before PDF.js inflates it, with memory far below the inflated size', async () => {
    // A quarter-megabyte file whose one page stream inflates to 256 MiB (before the bound, the child peaked near 630 MiB).
    const path = join(folder, 'bomb.pdf');
    const size = await writePdfBomb(path, 256 * MEBIBYTE);
    expect(size).toBeLessThan(MEBIBYTE);
    const { result, peakMiB } = await ingestInChild(path);
    expect(result.summary.filesIngested).toBe(0);
    expect(result.summary.skipped).toEqual([
      {
        path: 'bomb.pdf',
        code: 'too-large',
        reason: expect.stringMatching(
          /^bomb\.pdf \(\d+ KiB\) holds streams that inflate to more than 128\.0 MiB, the maxExtractedBytes limit; it was not read\./,
        ),
      },
    ]);
    expect(peakMiB).toBeLessThan(300);
  }, 180_000);

  it('is read when the limit is raised above it, and a lower limit refuses a smaller bomb', async () => {
    const path = join(folder, 'small-bomb.pdf');
    await writePdfBomb(path, 8 * MEBIBYTE, 'Small bomb page');
    const store = new MemoryStore();
    const target = { embeddings: new FakeEmbeddings(16, 2), store };
    const refused = await ingestPaths([path], target, { baseDirectory: folder, maxExtractedBytes: 4 * MEBIBYTE });
    expect(refused.skipped.map((issue) => [issue.code, issue.reason.includes('more than 4.0 MiB')])).toEqual([['too-large', true]]);
    const read = await ingestPaths([path], target, { baseDirectory: folder, maxExtractedBytes: 16 * MEBIBYTE });
    expect(read.filesIngested).toBe(1);
    expect((await store.getBySource('file', 'small-bomb.pdf'))[0].content).toBe('Small bomb page');
  }, 60_000);

  it('the loader throws CAPACITY_EXCEEDED naming the option, for every filter that can inflate, encrypted or not', async () => {
    const { deflateSync } = await import('node:zlib');
    const page = Buffer.from(`BT /F1 12 Tf 72 712 Td (Filters) Tj ET\n${' '.repeat(3 * MEBIBYTE)}`, 'latin1');
    // Run-length: 129 copies of a space per two bytes; ASCII hex around deflate; LZW of a run of one byte.
    const runLength = Buffer.concat([
      Buffer.from([0x26, ...Buffer.from('BT /F1 12 Tf 72 712 Td (Filters) Tj ET\n', 'latin1')]),
      Buffer.alloc(Math.ceil((3 * MEBIBYTE) / 129) * 2, 0).map((_, index) => (index % 2 === 0 ? 129 : 0x20)),
      Buffer.from([128]),
    ]);
    const cases: [string, Buffer, string][] = [
      ['flate', deflateSync(page), '/Filter /FlateDecode'],
      ['run-length', runLength, '/Filter /RunLengthDecode'],
      ['ascii-hex then flate', Buffer.from(`${deflateSync(page).toString('hex')}>`), '/Filter [/ASCIIHexDecode /FlateDecode]'],
      ['ascii-85 then flate', ascii85(deflateSync(page)), '/Filter [/A85 /Fl]'],
      ['lzw', lzwOfRepeatedByte('BT /F1 12 Tf 72 712 Td (Filters) Tj ET\n', 0x20, 3 * MEBIBYTE), '/Filter /LZWDecode'],
    ];
    // Encrypted with the empty user password, as a PDF that opens without asking is: counted decrypted.
    const flate = deflateSync(page);
    const encrypted: [string, Buffer][] = (['rc4', 'aes-128', 'aes-256'] as const).map((scheme) => [
      `flate encrypted with ${scheme}`,
      buildEncryptedPdf(flate, '/Filter /FlateDecode', scheme),
    ]);
    const plain = cases.map(([name, stream, filter]): [string, Buffer] => [name, buildPdf(stream, filter)]);
    for (const [name, pdf] of [...plain, ...encrypted]) {
      const bytes = new Uint8Array(pdf);
      const source = createLoaderSource({
        path: '/virtual/f.pdf',
        sourceName: 'f.pdf',
        extension: 'pdf',
        size: bytes.length,
        encoding: 'utf-8',
        bomLength: 0,
        bytes,
        maxExtractedBytes: 2 * MEBIBYTE,
        warn: () => {},
      });
      await expect(drain(new PdfLoader().load(source)), name).rejects.toMatchObject({
        code: 'CAPACITY_EXCEEDED',
        component: 'pdf-loader',
        details: { option: 'maxExtractedBytes', limit: 2 * MEBIBYTE, file: 'f.pdf' },
      });
      const roomy = createLoaderSource({
        path: '/virtual/f.pdf',
        sourceName: 'f.pdf',
        extension: 'pdf',
        size: bytes.length,
        encoding: 'utf-8',
        bomLength: 0,
        bytes,
        maxExtractedBytes: 8 * MEBIBYTE,
        warn: () => {},
      });
      expect(
        (await drain(new PdfLoader().load(roomy))).map((document) => document.content),
        name,
      ).toEqual(['Filters']);
      expect((await measurePdfStreams(bytes, 64 * MEBIBYTE)).encryption, name).toBe(name.includes('encrypted') ? 'decrypted' : 'none');
    }
  }, 60_000);
});

describe('measurePdfStreams', () => {
  it('counts a stream past an endstream hidden in its data, when /Length does not say where it ends', async () => {
    const { createDeflate, constants } = await import('node:zlib');
    // Deflate whose first block is stored (uncompressed) and spells "endstream": a scan for the keyword stops there.
    const deflate = createDeflate({ level: 0 });
    const parts: Buffer[] = [];
    deflate.on('data', (part: Buffer) => parts.push(part));
    deflate.write(Buffer.from('BT ET\nendstream\nendobj\n', 'latin1'));
    await new Promise<void>((resolve) => deflate.flush(constants.Z_FULL_FLUSH, () => resolve()));
    await new Promise<void>((resolve) => deflate.params(9, constants.Z_DEFAULT_STRATEGY, () => resolve()));
    deflate.end(Buffer.alloc(6 * MEBIBYTE, 0x20));
    await new Promise((resolve) => deflate.on('end', resolve));
    const stream = Buffer.concat(parts);
    expect(stream.includes('endstream')).toBe(true);
    const pdf = buildPdf(stream, '/Filter /FlateDecode')
      .toString('latin1')
      .replace(/\/Length \d+/, '/Length 9 0 R');
    const measured = await measurePdfStreams(new Uint8Array(Buffer.from(pdf, 'latin1')), 64 * MEBIBYTE);
    expect(measured).toEqual({ decodedBytes: 6 * MEBIBYTE + 23, streams: 1, encryption: 'none', overLimit: false });
    expect(await measurePdfStreams(new Uint8Array(Buffer.from(pdf, 'latin1')), 4 * MEBIBYTE)).toMatchObject({ overLimit: true });
  });
});

describe('memory follows what is kept, not the largest line', () => {
  it('a 20 MB text file on one line is cut into blocks, and the child stays far below the line times the copies once made of it', async () => {
    const path = join(folder, 'one-line.txt');
    await writeSingleLineText(path, 20 * 1000 * 1000);
    const { result, peakMiB } = await ingestInChild(path);
    expect(result.summary.ok).toBe(true);
    // Every character is stored (chunks overlap, so more than the file).
    expect(result.stored.characters).toBeGreaterThan(20 * 1000 * 1000);
    // Before the lines were cut, this child peaked at about 840 MiB.
    expect(peakMiB).toBeLessThan(450);
  }, 300_000);

  it('100,000 JSON Lines records are streamed: memory does not follow the record count', async () => {
    const path = join(folder, 'records.jsonl');
    await writeJsonlRecords(path, 100_000);
    const { result, peakMiB } = await ingestInChild(path);
    expect(result.stored.documents).toBe(100_000);
    expect(peakMiB).toBeLessThan(400);
  }, 300_000);
});

/** Base-85 as PDF writes it: five characters per four bytes, `z` for four zeros, `~>` at the end. */
function ascii85(bytes: Buffer): Buffer {
  let text = '';
  for (let at = 0; at < bytes.length; at += 4) {
    const group = bytes.subarray(at, at + 4);
    const padded = Buffer.concat([group, Buffer.alloc(4 - group.length)]);
    let value = padded.readUInt32BE(0);
    if (value === 0 && group.length === 4) {
      text += 'z';
      continue;
    }
    const digits: string[] = [];
    for (let index = 0; index < 5; index++) {
      digits.unshift(String.fromCharCode(33 + (value % 85)));
      value = Math.floor(value / 85);
    }
    text += digits.slice(0, group.length + 1).join('');
  }
  return Buffer.from(`${text}~>`, 'latin1');
}

async function drain<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/**
 * LZW (PDF's flavour: 9 to 12 bits, most significant bit first, early change) of `head`, then `count` copies of one
 * byte: the byte, then codes 258, 259, … for runs of 2, 3, … copies (each defined by the code that names it), clearing the
 * table before it is full.
 */
function lzwOfRepeatedByte(head: string, byte: number, count: number): Buffer {
  const codes: [code: number, width: number][] = [[256, 9]];
  let written = 0;
  let nextCode = 258;
  let codeLength = 9;
  // The head as literal codes (each after the first defines an entry), then a clear.
  for (const [index, character] of [...Buffer.from(head, 'latin1')].entries()) {
    codes.push([character, codeLength]);
    if (index > 0) nextCode += 1;
    if (nextCode + 1 >= 1 << codeLength && codeLength < 12) codeLength += 1;
  }
  codes.push([256, codeLength]);
  nextCode = 258;
  codeLength = 9;
  let run = 1;
  while (written < count) {
    const take = Math.min(run, count - written);
    codes.push([take === 1 ? byte : 258 + take - 2, codeLength]);
    written += take;
    // The decoder defines an entry for every code but the first after a clear, and widens its codes as it fills.
    if (run > 1) nextCode += 1;
    if (nextCode + 1 >= 1 << codeLength && codeLength < 12) codeLength += 1;
    run += 1;
    if (nextCode >= 4000) {
      codes.push([256, codeLength]);
      nextCode = 258;
      codeLength = 9;
      run = 1;
    }
  }
  codes.push([257, codeLength]);
  let bits = 0;
  let bitCount = 0;
  const bytes: number[] = [];
  for (const [code, width] of codes) {
    bits = (bits << width) | code;
    bitCount += width;
    while (bitCount >= 8) {
      bitCount -= 8;
      bytes.push((bits >> bitCount) & 0xff);
    }
    bits &= (1 << bitCount) - 1;
  }
  if (bitCount > 0) bytes.push((bits << (8 - bitCount)) & 0xff);
  return Buffer.from(bytes);
}
