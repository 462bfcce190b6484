import { describe, expect, it } from 'vitest';
import { createDefaultLoaders } from '../../src/ingest/loaders/index.ts';
import { CsvLoader } from '../../src/ingest/loaders/csv-loader.ts';
import { HtmlLoader } from '../../src/ingest/loaders/html-loader.ts';
import { JsonLoader } from '../../src/ingest/loaders/json-loader.ts';
import { MarkdownLoader } from '../../src/ingest/loaders/markdown-loader.ts';
import { PdfLoader } from '../../src/ingest/loaders/pdf-loader.ts';
import { TextLoader } from '../../src/ingest/loaders/text-loader.ts';
import { describeLoaderConformance } from '../../testing/loader.ts';

/** A minimal one-page PDF 1.4 showing each paragraph on its own line, with a correct cross-reference table. */
function pdfOf(paragraphs: string[]): Uint8Array {
  const escapeText = (text: string) => text.replace(/[\\()]/g, (character) => `\\${character}`);
  const lines = paragraphs.map((paragraph, index) => `BT /F1 10 Tf 40 ${780 - index * 14} Td (${escapeText(paragraph)}) Tj ET`).join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${Buffer.byteLength(lines, 'latin1')} >>\nstream\n${lines}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(body, 'latin1'));
}

const escapeHtml = (text: string) => text.replace(/[&<>]/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[character]!);
const csvField = (text: string) => `"${text.replace(/"/g, '""')}"`;

describeLoaderConformance('text-loader', { create: () => new TextLoader(), extension: 'txt', encode: (texts) => texts.join('\n\n') });
describeLoaderConformance('markdown-loader', {
  create: () => new MarkdownLoader(),
  extension: 'md',
  encode: (texts) => `# Notes\n\n${texts.map((text, index) => (index % 3 === 0 ? `## Part ${index}\n\n${text}` : text)).join('\n\n')}\n`,
});
describeLoaderConformance('html-loader', {
  create: () => new HtmlLoader(),
  extension: 'html',
  encode: (texts) =>
    `<!doctype html><html><head><title>Notes</title></head><body>${texts.map((text) => `<p>${escapeHtml(text)}</p>`).join('\n')}</body></html>`,
});
describeLoaderConformance('json-loader', {
  create: () => new JsonLoader('json'),
  extension: 'json',
  encode: (texts) => JSON.stringify(texts.map((text, index) => ({ id: index, text }))),
});
describeLoaderConformance('jsonl-loader', {
  create: () => new JsonLoader('jsonl'),
  extension: 'jsonl',
  encode: (texts) => texts.map((text, index) => JSON.stringify({ id: index, text })).join('\n'),
});
describeLoaderConformance('csv-loader', {
  create: () => new CsvLoader(),
  extension: 'csv',
  encode: (texts) => `id,text\n${texts.map((text, index) => `${index},${csvField(text)}`).join('\r\n')}\r\n`,
});
describeLoaderConformance(
  'pdf-loader',
  { create: () => new PdfLoader(), extension: 'pdf', encode: pdfOf },
  {
    skip: [
      {
        reason:
          'PDF is binary: it is read whole by design (bounded by ingestion maxFileBytes), and its strings are not UTF-8, so invalid UTF-8 has no meaning for it',
        tests: [
          'reads a huge file without losing text (streaming loaders through lines() or textStream() only)',
          'survives bad encoding: replacement characters keep the readable text',
        ],
      },
    ],
  },
);

describe('loader conformance coverage', () => {
  it('runs for every built-in loader', () => {
    const names = new Set(Object.values(createDefaultLoaders()).map((loader) => loader.name));
    expect([...names].sort()).toEqual(['csv-loader', 'html-loader', 'json-loader', 'jsonl-loader', 'markdown-loader', 'pdf-loader', 'text-loader']);
  });
});
