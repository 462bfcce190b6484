import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CsvLoader } from '../../src/ingest/loaders/csv-loader.ts';
import { CsvParser } from '../../src/ingest/loaders/csv-parser.ts';
import { HtmlLoader } from '../../src/ingest/loaders/html-loader.ts';
import { JsonLoader } from '../../src/ingest/loaders/json-loader.ts';
import { MarkdownLoader } from '../../src/ingest/loaders/markdown-loader.ts';
import { PdfLoader } from '../../src/ingest/loaders/pdf-loader.ts';
import { TextLoader } from '../../src/ingest/loaders/text-loader.ts';
import { createLoaderSource, sniffContent } from '../../src/ingest/source-file.ts';
import type { LoadedDocument, Loader } from '../../src/ingest/types.ts';
import { makeManualPdf } from '../fixtures/ingest/make-manual-pdf.ts';

const fixture = (name: string) => new URL(`../fixtures/ingest/${name}`, import.meta.url);

async function load(loader: Loader, bytes: Uint8Array | string, extension: string): Promise<{ documents: LoadedDocument[]; warnings: string[] }> {
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  const sniff = sniffContent(data, true);
  const warnings: string[] = [];
  const source = createLoaderSource({
    path: `/virtual/file.${extension}`,
    sourceName: `file.${extension}`,
    extension,
    size: data.length,
    encoding: sniff.binary ? 'utf-8' : sniff.encoding,
    bomLength: sniff.binary ? 0 : sniff.bomLength,
    bytes: data,
    warn: (message) => warnings.push(message),
  });
  const documents: LoadedDocument[] = [];
  for await (const document of loader.load(source)) documents.push(document);
  return { documents, warnings };
}

describe('MarkdownLoader', () => {
  it('moves front matter into metadata and marks the text for the Markdown splitter', async () => {
    const { documents } = await load(new MarkdownLoader(), new Uint8Array(await readFile(fixture('guide.md'))), 'md');
    expect(documents).toHaveLength(1);
    expect(documents[0].metadata).toEqual({ title: 'Widget Guide', tags: ['widgets', 'setup'], version: 2, draft: false });
    expect(documents[0].markdown).toBe(true);
    expect(documents[0].content.startsWith('# Widget Guide')).toBe(true);
    expect(documents[0].content).not.toContain('tags:');
  });

  it('takes the title from the first level-1 heading without front matter, and rejects broken YAML', async () => {
    const { documents } = await load(new MarkdownLoader(), '```\n# not this\n```\n# Real Title\n\ntext', 'md');
    expect(documents[0].metadata).toEqual({ title: 'Real Title' });
    await expect(load(new MarkdownLoader(), '---\ntitle: [unclosed\n---\nbody', 'md')).rejects.toThrow(/front matter of file\.md is not valid YAML/);
  });
});

describe('HtmlLoader', () => {
  it('keeps visible text only and puts the title into metadata', async () => {
    const { documents } = await load(new HtmlLoader(), new Uint8Array(await readFile(fixture('page.html'))), 'html');
    expect(documents).toHaveLength(1);
    const [page] = documents;
    expect(page.metadata).toEqual({ title: 'Sprocket Maintenance', description: 'How to keep sprockets clean', language: 'en' });
    for (const hidden of ['SCRIPT', 'STYLE', 'NAV-', 'SITE-HEADER', 'FOOTER-TEXT', 'HIDDEN-TEXT', 'NOSCRIPT-TEXT', 'tracking'])
      expect(page.content).not.toContain(hidden);
    expect(page.content).toBe(
      'Sprocket Maintenance\n\nClean each sprocket weekly with a dry cloth & inspect the teeth.\n\nReplace a sprocket when more than two teeth are chipped.\n\ntorque:  12 Nm\nspacing: 4 mm',
    );
  });
});

describe('PdfLoader', () => {
  it('yields one document per page with text, carrying its page number and the title', async () => {
    const { documents } = await load(new PdfLoader(), await makeManualPdf(), 'pdf');
    expect(documents.map((document) => document.metadata.pageNumber)).toEqual([1, 2, 4]);
    expect(documents[1].content).toBe('The flux capacitor needs 1.21 gigawatts to start.\nNever open it while it is charged.');
    expect(documents[2].metadata).toEqual({ pageNumber: 4, pageCount: 4, title: 'Gearbox Manual' });
  });

  it('reports a corrupt PDF as an error naming the file', async () => {
    await expect(load(new PdfLoader(), new TextEncoder().encode('%PDF-1.7\nthis is not really a pdf'), 'pdf')).rejects.toThrow(
      /file\.pdf is not a readable PDF/,
    );
  });
});

describe('JsonLoader', () => {
  it('reads JSON Lines with a configurable text field, skipping malformed lines with a warning', async () => {
    const lines = [
      '{"_id":"a","title":"Alpha","text":"First text.","year":2020,"nested":{"x":1}}',
      'not json',
      '',
      '{"_id":"b","title":"Beta","text":"Second text."}',
      '{"_id":"c","title":"No text"}',
    ].join('\n');
    const { documents, warnings } = await load(new JsonLoader('jsonl', { textField: ['title', 'text'] }), lines, 'jsonl');
    expect(documents).toEqual([
      { content: 'Alpha\n\nFirst text.', metadata: { _id: 'a', year: 2020, recordIndex: 0, lineNumber: 1 } },
      { content: 'Beta\n\nSecond text.', metadata: { _id: 'b', recordIndex: 1, lineNumber: 4 } },
      { content: 'No text', metadata: { _id: 'c', recordIndex: 2, lineNumber: 5 } },
    ]);
    expect(warnings).toEqual(['line 2 is not valid JSON (Unexpected token \'o\', "not json" is not valid JSON); skipped.']);
  });

  it('leaves out a field nested 100,000 deep and says so for each record, keeping the record and the other fields', async () => {
    const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const lines = [
      `{"text":"Kept, with its tenant.","tenantId":"acme","facts":${deep(100_000)}}`,
      `{"text":"Deep and not structured.","nested":${deep(100_000)},"year":2024}`,
      `{"text":"Deep enough and no deeper.","facts":${deep(63)}}`,
      `{"text":"One level too deep.","facts":${deep(64)}}`,
    ].join('\n');
    const { documents, warnings } = await load(new JsonLoader('jsonl'), lines, 'jsonl');
    expect(documents.map((document) => document.content)).toEqual([
      'Kept, with its tenant.',
      'Deep and not structured.',
      'Deep enough and no deeper.',
      'One level too deep.',
    ]);
    expect(documents[0].metadata).toEqual({ tenantId: 'acme', recordIndex: 0, lineNumber: 1 });
    expect(documents[1].metadata).toEqual({ year: 2024, recordIndex: 1, lineNumber: 2 });
    expect(Object.keys(documents[2].metadata)).toEqual(['facts', 'recordIndex', 'lineNumber']);
    expect(warnings).toEqual([
      `line 1: field "facts" nests deeper than 63 levels, so it was left out of the metadata (the record's text was kept).`,
      `line 2: field "nested" nests deeper than 63 levels, so it was left out of the metadata (the record's text was kept).`,
      `line 4: field "facts" nests deeper than 63 levels, so it was left out of the metadata (the record's text was kept).`,
    ]);
    // Asked for by name: the same, and a JSON file names the record by its index.
    const json = `[{"text":"x","deep":${deep(100_000)}}]`;
    const named = await load(new JsonLoader('json', { metadataFields: ['deep'] }), json, 'json');
    expect(named.documents).toEqual([{ content: 'x', metadata: { recordIndex: 0 } }]);
    expect(named.warnings).toEqual([`record 0: field "deep" nests deeper than 63 levels, so it was left out of the metadata (the record's text was kept).`]);
    // Past five records the rest are counted.
    const many = Array.from({ length: 8 }, () => `{"text":"t","facts":${deep(70)}}`).join('\n');
    const counted = await load(new JsonLoader('jsonl'), many, 'jsonl');
    expect(counted.warnings).toHaveLength(6);
    expect(counted.warnings[5]).toBe('8 records in all had fields nested deeper than 63 levels left out of their metadata.');
  });

  it('reads a JSON array with the default text field and a dotted path', async () => {
    const json = JSON.stringify([{ content: 'One', meta: { lang: 'en' } }, { body: 'no content field' }, 'A bare string']);
    const { documents, warnings } = await load(new JsonLoader('json', { metadataFields: ['meta.lang'] }), json, 'json');
    expect(documents).toEqual([
      { content: 'One', metadata: { 'meta.lang': 'en', recordIndex: 0 } },
      { content: 'no content field', metadata: { recordIndex: 1 } },
      { content: 'A bare string', metadata: { recordIndex: 2 } },
    ]);
    expect(warnings).toEqual([]);
    await expect(load(new JsonLoader('json'), '{ broken', 'json')).rejects.toThrow(/file\.json is not valid JSON/);
  });
});

describe('CsvParser', () => {
  it('follows RFC 4180: quotes, doubled quotes, delimiters and line breaks inside quotes, CRLF', () => {
    const parser = new CsvParser();
    const text = 'name,quote\r\n"Smith, J.","He said ""hi""\r\nthen left"\r\nplain,value\r\n\r\nlast,"unfinished';
    // Fed one character at a time, as a stream may cut anywhere.
    const records = [...text].flatMap((character) => parser.push(character)).concat(parser.end());
    expect(records).toEqual([
      ['name', 'quote'],
      ['Smith, J.', 'He said "hi"\r\nthen left'],
      ['plain', 'value'],
      ['last', 'unfinished'],
    ]);
  });
});

describe('CsvLoader', () => {
  it('makes a document per row from every column by default', async () => {
    const { documents } = await load(new CsvLoader(), 'id,question,answer\n1,What is it?,"A gear, mostly."\n2,,Nothing\n', 'csv');
    expect(documents).toEqual([
      { content: 'id: 1\nquestion: What is it?\nanswer: A gear, mostly.', metadata: { rowNumber: 1 } },
      { content: 'id: 2\nanswer: Nothing', metadata: { rowNumber: 2 } },
    ]);
  });

  it('uses text columns for the text and the rest as metadata; tabs for .tsv', async () => {
    const { documents, warnings } = await load(new CsvLoader({ textColumns: ['answer'] }), 'id\tanswer\n7\tSeven\n8\tEight\textra\n', 'tsv');
    expect(documents).toEqual([
      { content: 'Seven', metadata: { id: '7', rowNumber: 1 } },
      { content: 'Eight', metadata: { id: '8', rowNumber: 2 } },
    ]);
    expect(warnings).toEqual(['1 row has a different number of fields than the header.']);
    await expect(load(new CsvLoader({ textColumns: ['missing'] }), 'a,b\n1,2\n', 'csv')).rejects.toThrow(/has no column "missing" \(columns: a, b\)/);
  });
});

describe('TextLoader and content sniffing', () => {
  it('normalises CRLF and strips a UTF-8 byte-order mark', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('one\r\ntwo')]);
    const { documents } = await load(new TextLoader(), bytes, 'txt');
    expect(documents).toEqual([{ content: 'one\ntwo', metadata: {} }]);
  });

  it('streams a huge file from disk in blocks cut at blank lines, each knowing its first line', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-text-'));
    try {
      const paragraph = `${'word '.repeat(199)}word`; // 999 characters
      const lines = Array.from({ length: 4999 }, (_, index) => (index % 2 === 1 ? '' : `${index}: ${paragraph}`));
      const path = join(directory, 'huge.txt');
      await writeFile(path, lines.join('\r\n'));
      const source = createLoaderSource({ path, sourceName: 'huge.txt', extension: 'txt', size: 0, encoding: 'utf-8', bomLength: 0, warn: () => {} });
      const blocks: LoadedDocument[] = [];
      for await (const block of new TextLoader().load(source)) blocks.push(block);
      expect(blocks.length).toBe(3);
      expect(blocks.map((block) => block.content.length < 1.1 * 1024 * 1024)).toEqual([true, true, true]);
      expect(blocks[0].metadata).toEqual({ lineStart: 1 });
      for (const block of blocks.slice(1)) {
        const start = block.metadata.lineStart as number;
        expect(block.content.split('\n')[0]).toBe(lines[start - 1]);
        expect(lines[start - 1]).toBe('');
      }
      expect(blocks.map((block) => block.content).join('\n')).toBe(lines.join('\n'));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('decodes UTF-16 with a BOM, and Latin-1 text that is not UTF-8', async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00]);
    expect((await load(new TextLoader(), utf16, 'txt')).documents[0].content).toBe('hé');
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6f, 0x6b]);
    expect(sniffContent(latin1, true)).toEqual({ binary: false, encoding: 'utf-8+windows-1252', bomLength: 0 });
    expect((await load(new TextLoader(), latin1, 'txt')).documents[0].content).toBe('café ok');
  });

  it('keeps valid UTF-8 as UTF-8 in a file with stray Windows-1252 bytes, in memory and streamed in pieces', async () => {
    // "café" in UTF-8, then a Windows-1252 "é" and "€", then UTF-8 "naïve" and "😀" (four bytes).
    const encoder = new TextEncoder();
    const bytes = new Uint8Array([...encoder.encode('café '), 0xe9, 0x80, ...encoder.encode(' naïve 😀 fin')]);
    expect(sniffContent(bytes, true)).toEqual({ binary: false, encoding: 'utf-8+windows-1252', bomLength: 0 });
    expect((await load(new TextLoader(), bytes, 'txt')).documents[0].content).toBe('café é€ naïve 😀 fin');
    // Streamed from disk in pieces of every size, so sequences are cut at every place.
    const directory = await mkdtemp(join(tmpdir(), 'axon-mixed-'));
    try {
      const path = join(directory, 'mixed.txt');
      await writeFile(path, bytes);
      for (let piece = 1; piece <= 7; piece++) {
        const { createPieceDecoder } = await import('../../src/ingest/text-encoding.ts');
        const decoder = createPieceDecoder('utf-8+windows-1252');
        let text = '';
        for (let at = 0; at < bytes.length; at += piece) text += decoder.decode(bytes.subarray(at, at + piece), { stream: true });
        text += decoder.decode();
        expect(text, `pieces of ${piece}`).toBe('café é€ naïve 😀 fin');
      }
      const source = createLoaderSource({
        path,
        sourceName: 'mixed.txt',
        extension: 'txt',
        size: 0,
        encoding: 'utf-8+windows-1252',
        bomLength: 0,
        warn: () => {},
      });
      const streamed: string[] = [];
      for await (const document of new TextLoader().load(source)) streamed.push(document.content);
      expect(streamed).toEqual(['café é€ naïve 😀 fin']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('calls a UTF-16 byte-order mark followed by bytes that are not UTF-16 binary, not one U+FFFD', () => {
    expect(sniffContent(new Uint8Array([0xff, 0xfe, 0x00]), true)).toEqual({
      binary: true,
      reason: 'starts with a UTF-16 byte-order mark but is an odd number of bytes long, so it is binary',
    });
    expect(sniffContent(new Uint8Array([0xff, 0xfe, 0x00, 0x00]), true)).toMatchObject({ binary: true, reason: expect.stringMatching(/NUL characters/) });
    // A lone low surrogate (0xDC00, little-endian).
    expect(sniffContent(new Uint8Array([0xff, 0xfe, 0x00, 0xdc]), true)).toMatchObject({ binary: true, reason: expect.stringMatching(/not valid UTF-16/) });
    expect(sniffContent(new Uint8Array([0xfe, 0xff, 0x00, 0x68]), true)).toEqual({ binary: false, encoding: 'utf-16be', bomLength: 2 });
  });

  it('cuts a file that is one long line into blocks of bounded size at spaces, each starting on line 1', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-line-'));
    try {
      const words = Array.from({ length: 700_000 }, (_, index) => `w${index}`);
      const path = join(directory, 'line.txt');
      await writeFile(path, `first line\n${words.join(' ')}\nlast line`);
      const source = createLoaderSource({ path, sourceName: 'line.txt', extension: 'txt', size: 0, encoding: 'utf-8', bomLength: 0, warn: () => {} });
      const blocks: LoadedDocument[] = [];
      for await (const block of new TextLoader().load(source)) blocks.push(block);
      expect(blocks.length).toBeGreaterThan(2);
      for (const block of blocks) expect(block.content.length).toBeLessThanOrEqual(2 * 1024 * 1024);
      expect(blocks.map((block) => block.metadata.lineStart)).toEqual([1, ...blocks.slice(1, -1).map(() => 2), 2]);
      // The first line is a block of its own; the long line is cut only after spaces, so every word arrives whole
      // and the pieces put together are the line; the last line ends the last block.
      expect(blocks[0].content).toBe('first line');
      const cut = blocks.slice(1, -1).map((block) => block.content);
      for (const piece of cut) expect(piece.endsWith(' ')).toBe(true);
      expect(cut.join('') + blocks.at(-1)!.content).toBe(`${words.join(' ')}\nlast line`);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('calls bytes with NUL or many control characters binary', () => {
    expect(sniffContent(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00, 0x01]), true)).toMatchObject({ binary: true, reason: expect.stringMatching(/NUL/) });
    const noisy = new Uint8Array(200).map((_, index) => (index % 3 === 0 ? 0x01 : index % 3 === 1 ? 0xff : 0x41));
    expect(sniffContent(noisy, true)).toMatchObject({ binary: true, reason: expect.stringMatching(/control characters/) });
  });
});
