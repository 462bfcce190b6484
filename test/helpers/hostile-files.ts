/**
 * Files built to make an ingestion use far more memory than they are large: a PDF whose page stream inflates
 * to hundreds of mebibytes, a text file that is one long line, a JSON Lines file of many records. Written as
 * streams, so building them costs little memory. Shared by the memory tests and `bench/ingest-memory.ts`.
 */
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createDeflate, constants as zlibConstants } from 'node:zlib';

const MEBIBYTE = 1024 * 1024;

/**
 * Write a one-page PDF whose page content stream (FlateDecode) inflates to `inflatedBytes`: a line of text,
 * then spaces. At the best compression deflate reaches about 1:1000, so 512 MiB becomes about half a megabyte.
 * Returns the file's size.
 */
export async function writePdfBomb(path: string, inflatedBytes: number, text = 'Deflate bomb page'): Promise<number> {
  const head = Buffer.from(`BT /F1 12 Tf 72 712 Td (${text}) Tj ET\n`, 'latin1');
  const stream = await deflateRepeated(head, 0x20, Math.max(0, inflatedBytes - head.length));
  const pdf = buildPdf(stream, '/Filter /FlateDecode');
  await writeFile(path, pdf);
  return pdf.length;
}

/**
 * Assemble a one-page PDF around an already encoded content stream, with a correct cross-reference table.
 * `filter` is the stream dictionary's filter entry (e.g. `/Filter /FlateDecode`), empty for none.
 */
export function buildPdf(contentStream: Buffer, filter: string): Buffer {
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>'),
    Buffer.concat([Buffer.from(`<< /Length ${contentStream.length} ${filter} >>\nstream\n`), contentStream, Buffer.from('\nendstream')]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(offset);
    const object = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(object);
    offset += object.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** Write `bytes` of text with no line break: words separated by single spaces. */
export async function writeSingleLineText(path: string, bytes: number): Promise<void> {
  const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa ';
  const piece = Buffer.from(words.repeat(Math.ceil(MEBIBYTE / words.length)).slice(0, MEBIBYTE));
  await writePieces(path, bytes, (length) => piece.subarray(0, length));
}

/** Write `count` JSON Lines records, each `{ "id", "title", "text" }` with a sentence or two of text. */
export async function writeJsonlRecords(path: string, count: number): Promise<void> {
  const output = createWriteStream(path);
  for (let index = 0; index < count; index++) {
    const line = `${JSON.stringify({ id: `record-${index}`, title: `Record ${index}`, text: `Record ${index} describes item ${index % 977} of shelf ${index % 31}, filed under topic ${index % 101}.` })}\n`;
    if (!output.write(line)) await once(output, 'drain');
  }
  output.end();
  await once(output, 'finish');
}

// --- Internal helpers ---

/** `head`, then `count` copies of `fill`, deflated at the best compression without holding the inflated bytes. */
async function deflateRepeated(head: Buffer, fill: number, count: number): Promise<Buffer> {
  const deflate = createDeflate({ level: zlibConstants.Z_BEST_COMPRESSION, memLevel: 9 });
  const output: Buffer[] = [];
  deflate.on('data', (part: Buffer) => output.push(part));
  const finished = once(deflate, 'end');
  deflate.write(head);
  const block = Buffer.alloc(4 * MEBIBYTE, fill);
  for (let left = count; left > 0; left -= block.length) {
    if (!deflate.write(left >= block.length ? block : block.subarray(0, left))) await once(deflate, 'drain');
  }
  deflate.end();
  await finished;
  return Buffer.concat(output);
}

async function writePieces(path: string, bytes: number, pieceOf: (length: number) => Buffer): Promise<void> {
  const output = createWriteStream(path);
  for (let left = bytes; left > 0; left -= MEBIBYTE) {
    if (!output.write(pieceOf(Math.min(MEBIBYTE, left)))) await once(output, 'drain');
  }
  output.end();
  await once(output, 'finish');
}
