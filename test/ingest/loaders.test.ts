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
    expect(sniffContent(latin1, true)).toEqual({ binary: false, encoding: 'windows-1252', bomLength: 0 });
    expect((await load(new TextLoader(), latin1, 'txt')).documents[0].content).toBe('café ok');
  });

  it('calls bytes with NUL or many control characters binary', () => {
    expect(sniffContent(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00, 0x01]), true)).toMatchObject({ binary: true, reason: expect.stringMatching(/NUL/) });
    const noisy = new Uint8Array(200).map((_, index) => (index % 3 === 0 ? 0x01 : index % 3 === 1 ? 0xff : 0x41));
    expect(sniffContent(noisy, true)).toMatchObject({ binary: true, reason: expect.stringMatching(/control characters/) });
  });
});
