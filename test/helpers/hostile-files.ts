/**
 * Files built to make an ingestion use far more memory than they are large: a PDF whose page stream inflates
 * to hundreds of mebibytes, a text file that is one long line, a JSON Lines file of many records. Written as
 * streams, so building them costs little memory. Shared by the memory tests and `bench/ingest-memory.ts`.
 */
import { createCipheriv, createHash } from 'node:crypto';
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
export function buildPdf(contentStream: Buffer, filter: string, options: { extraObjects?: string[]; trailer?: string } = {}): Buffer {
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>'),
    Buffer.concat([Buffer.from(`<< /Length ${contentStream.length} ${filter} >>\nstream\n`), contentStream, Buffer.from('\nendstream')]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
    ...(options.extraObjects ?? []).map((object) => Buffer.from(object, 'latin1')),
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
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${options.trailer ?? ''}>>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/**
 * A one-page PDF like `buildPdf`'s whose content stream (object 4) is encrypted by the standard security handler
 * with an empty user password, the way a PDF that opens without asking is: RC4 128-bit (revision 3), AES-128
 * (revision 4) or AES-256 (revision 6). Written independently of the reader's code; PDF.js opening it is the check.
 */
export function buildEncryptedPdf(plainStream: Buffer, filter: string, scheme: 'rc4' | 'aes-128' | 'aes-256'): Buffer {
  const identifier = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  const owner = Buffer.alloc(scheme === 'aes-256' ? 48 : 32, 0x4f);
  const trailer = `/Encrypt 6 0 R /ID [<${identifier.toString('hex')}> <${identifier.toString('hex')}>]`;
  if (scheme === 'aes-256') {
    const fileKey = Buffer.alloc(32, 0x2a);
    const [validationSalt, keySalt] = [Buffer.alloc(8, 0x11), Buffer.alloc(8, 0x22)];
    const user = Buffer.concat([revision6Hash(validationSalt), validationSalt, keySalt]);
    const userKey = cbc('aes-256-cbc', revision6Hash(keySalt), Buffer.alloc(16), fileKey, false);
    const iv = Buffer.alloc(16, 0x07);
    const encrypted = Buffer.concat([iv, cbc('aes-256-cbc', fileKey, iv, plainStream, true)]);
    const dictionary =
      `<< /Filter /Standard /V 5 /R 6 /Length 256 /CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF ` +
      `/O <${owner.toString('hex')}> /U <${user.toString('hex')}> /OE <${Buffer.alloc(32, 1).toString('hex')}> /UE <${userKey.toString('hex')}> /P -3904 /Perms <${Buffer.alloc(16, 2).toString('hex')}> >>`;
    return buildPdf(encrypted, filter, { extraObjects: [dictionary], trailer });
  }
  const revision = scheme === 'rc4' ? 3 : 4;
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(-3904);
  let key = createHash('md5').update(PADDING).update(owner).update(permissions).update(identifier).digest();
  for (let round = 0; round < 50; round++) key = createHash('md5').update(key).digest();
  let user = rc4(key, createHash('md5').update(PADDING).update(identifier).digest());
  for (let round = 1; round <= 19; round++) user = rc4(key.map((byte) => byte ^ round) as Buffer, user);
  user = Buffer.concat([user, Buffer.alloc(16)]);
  const objectKey = createHash('md5')
    .update(key)
    .update(Buffer.from([4, 0, 0, 0, 0]))
    .update(scheme === 'aes-128' ? 'sAlT' : '')
    .digest();
  let encrypted: Buffer;
  if (scheme === 'rc4') encrypted = rc4(objectKey, plainStream);
  else {
    const iv = Buffer.alloc(16, 0x09);
    encrypted = Buffer.concat([iv, cbc('aes-128-cbc', objectKey, iv, plainStream, true)]);
  }
  const cryptFilter = scheme === 'aes-128' ? '/CF << /StdCF << /CFM /AESV2 /AuthEvent /DocOpen /Length 16 >> >> /StmF /StdCF /StrF /StdCF ' : '';
  const dictionary = `<< /Filter /Standard /V ${revision === 3 ? 2 : 4} /R ${revision} /Length 128 ${cryptFilter}/O <${owner.toString('hex')}> /U <${user.toString('hex')}> /P -3904 >>`;
  return buildPdf(encrypted, filter, { extraObjects: [dictionary], trailer });
}

const PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

function rc4(key: Buffer, data: Buffer): Buffer {
  const state = Array.from({ length: 256 }, (_, index) => index);
  for (let index = 0, other = 0; index < 256; index++) {
    other = (other + state[index] + key[index % key.length]) % 256;
    [state[index], state[other]] = [state[other], state[index]];
  }
  const output = Buffer.alloc(data.length);
  for (let index = 0, i = 0, j = 0; index < data.length; index++) {
    i = (i + 1) % 256;
    j = (j + state[i]) % 256;
    [state[i], state[j]] = [state[j], state[i]];
    output[index] = data[index] ^ state[(state[i] + state[j]) % 256];
  }
  return output;
}

/** AES-CBC; with `pad`, PKCS #7 padding (what a PDF's AES streams carry), else none. */
function cbc(algorithm: string, key: Buffer, iv: Buffer, data: Buffer, pad: boolean): Buffer {
  const cipher = createCipheriv(algorithm, key, iv);
  cipher.setAutoPadding(pad);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** ISO 32000-2's revision 6 hash of the empty password with `salt`. */
function revision6Hash(salt: Buffer): Buffer {
  let key = createHash('sha256').update(salt).digest();
  let last = 0;
  for (let round = 1; round <= 64 || last > round - 33; round++) {
    const encrypted = cbc('aes-128-cbc', key.subarray(0, 16), key.subarray(16, 32), Buffer.concat(new Array(64).fill(key)), false);
    const remainder = [...encrypted.subarray(0, 16)].reduce((sum, byte) => sum + byte, 0) % 3;
    key = createHash(remainder === 0 ? 'sha256' : remainder === 1 ? 'sha384' : 'sha512')
      .update(encrypted)
      .digest();
    last = encrypted[encrypted.length - 1];
  }
  return key.subarray(0, 32);
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
