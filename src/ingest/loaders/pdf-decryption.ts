import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Decryption of a PDF's streams as the standard security handler encrypts them (PDF 32000-1 7.6; ISO 32000-2 for
 * AES-256), for a document whose user password is empty: the usual case of an "encrypted" PDF that opens without
 * asking (only printing or copying restricted), which a reader decrypts with the empty password before it inflates
 * anything. Used only to count what such a document's streams inflate to; a document that needs a password is one
 * PDF.js cannot open either.
 */
export interface PdfDecryption {
  /** A Transform that decrypts the data of the stream object `objectNumber` (generation `generation`). */
  decipher(objectNumber: number, generation: number): Transform;
}

/**
 * The decryption of `buffer`'s streams, from the last `/Encrypt` entry that points at a standard security handler
 * dictionary, or undefined when there is none this code can use (no such entry, another handler, an unknown
 * revision).
 */
export function pdfDecryption(buffer: Buffer): PdfDecryption | undefined {
  const text = buffer.toString('latin1');
  const dictionary = encryptDictionary(text);
  if (dictionary === undefined || !/\/Filter\s*\/Standard\b/.test(dictionary)) return undefined;
  // Streams left as they are (strings alone are encrypted): nothing to undo.
  if (/\/StmF\s*\/Identity\b/.test(dictionary)) return { decipher: () => new Transform({ transform: (chunk, _encoding, callback) => callback(null, chunk) }) };
  const revision = integer(dictionary, 'R');
  const version = integer(dictionary, 'V') ?? 0;
  const owner = stringValue(dictionary, 'O');
  const user = stringValue(dictionary, 'U');
  if (revision === undefined || owner === undefined || user === undefined) return undefined;
  if (revision >= 5) {
    const userKey = stringValue(dictionary, 'UE');
    if (userKey === undefined || user.length < 48) return undefined;
    const salt = user.subarray(40, 48);
    const intermediate = revision === 5 ? createHash('sha256').update(salt).digest() : hardenedHash(salt);
    const fileKey = aes('aes-256-cbc', intermediate, Buffer.alloc(16), userKey, false);
    return { decipher: () => new AesDecipher(fileKey) };
  }
  const identifier = firstIdentifier(text);
  if (identifier === undefined) return undefined;
  const method = version === 4 ? /\/CFM\s*\/(AESV2|V2|None)\b/.exec(dictionary)?.[1] : 'V2';
  if (method === undefined || method === 'None') return undefined;
  const length = revision === 2 ? 5 : Math.min(16, Math.floor((integer(dictionary, 'Length') ?? 40) / 8));
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(integer(dictionary, 'P') ?? 0);
  const hash = createHash('md5').update(PASSWORD_PADDING).update(owner.subarray(0, 32)).update(permissions).update(identifier);
  if (revision >= 4 && /\/EncryptMetadata\s+false\b/.test(dictionary)) hash.update(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  let key = hash.digest();
  if (revision >= 3) for (let round = 0; round < 50; round++) key = createHash('md5').update(key.subarray(0, length)).digest();
  const fileKey = key.subarray(0, length);
  return {
    decipher: (objectNumber, generation) => {
      const suffix = Buffer.from([objectNumber & 0xff, (objectNumber >> 8) & 0xff, (objectNumber >> 16) & 0xff, generation & 0xff, (generation >> 8) & 0xff]);
      const objectHash = createHash('md5').update(fileKey).update(suffix);
      if (method === 'AESV2') objectHash.update('sAlT');
      const objectKey = objectHash.digest().subarray(0, Math.min(length + 5, 16));
      return method === 'AESV2' ? new AesDecipher(objectKey) : new Rc4Decipher(objectKey);
    },
  };
}

// --- Internal helpers ---

/** The 32 bytes an empty password is padded with (PDF 32000-1, 7.6.3.3, Algorithm 2). */
const PASSWORD_PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

/** The text of the encryption dictionary the last `/Encrypt` entry names (a reference, or the dictionary itself). */
function encryptDictionary(text: string): string | undefined {
  const entries = [...text.matchAll(/\/Encrypt\s*(?:(\d+)\s+(\d+)\s+R|<<)/g)];
  for (const entry of entries.reverse()) {
    if (entry[1] === undefined) return balancedDictionary(text, entry.index + entry[0].length - 2);
    const object = new RegExp(`(?:^|[^\\d])${entry[1]}\\s+${entry[2]}\\s+obj\\s*<<`).exec(text);
    if (object) return balancedDictionary(text, object.index + object[0].length - 2);
  }
  return undefined;
}

/** The `<<…>>` starting at `start`, nested dictionaries included. */
function balancedDictionary(text: string, start: number): string | undefined {
  let depth = 0;
  for (let index = start; index < text.length - 1 && index < start + 64 * 1024; index++) {
    if (text[index] === '<' && text[index + 1] === '<') {
      depth += 1;
      index += 1;
    } else if (text[index] === '>' && text[index + 1] === '>') {
      depth -= 1;
      index += 1;
      if (depth === 0) return text.slice(start, index + 1);
    }
  }
  return undefined;
}

function integer(dictionary: string, key: string): number | undefined {
  const match = new RegExp(`/${key}\\s+(-?\\d+)(?![\\d.])`).exec(dictionary);
  return match ? Number(match[1]) : undefined;
}

/** The bytes of a string entry, literal (`(…)`, with its escapes) or hexadecimal (`<…>`). */
function stringValue(dictionary: string, key: string): Buffer | undefined {
  const at = new RegExp(`/${key}\\s*([(<])`).exec(dictionary);
  if (!at) return undefined;
  return parseString(dictionary, at.index + at[0].length - 1);
}

/** The first element of the last `/ID [<…> <…>]` array. */
function firstIdentifier(text: string): Buffer | undefined {
  const entries = [...text.matchAll(/\/ID\s*\[\s*([(<])/g)];
  const last = entries.at(-1);
  return last === undefined ? undefined : parseString(text, last.index + last[0].length - 1);
}

function parseString(text: string, start: number): Buffer | undefined {
  if (text[start] === '<') {
    const end = text.indexOf('>', start);
    if (end === -1) return undefined;
    const digits = text.slice(start + 1, end).replace(/\s+/g, '');
    return Buffer.from(digits.length % 2 === 1 ? `${digits}0` : digits, 'hex');
  }
  const bytes: number[] = [];
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (character === '\\') {
      const next = text[++index];
      const octal = /^[0-7]{1,3}/.exec(text.slice(index, index + 3));
      if (octal) {
        bytes.push(Number.parseInt(octal[0], 8) & 0xff);
        index += octal[0].length - 1;
      } else if (next === '\r' || next === '\n') {
        if (next === '\r' && text[index + 1] === '\n') index += 1;
      } else bytes.push(({ n: 10, r: 13, t: 9, b: 8, f: 12 } as Record<string, number>)[next] ?? next.charCodeAt(0));
      continue;
    }
    if (character === '(') {
      depth += 1;
      if (depth === 1) continue;
    } else if (character === ')') {
      depth -= 1;
      if (depth === 0) return Buffer.from(bytes);
    }
    bytes.push(character.charCodeAt(0) & 0xff);
  }
  return undefined;
}

/** ISO 32000-2 Algorithm 2.B with an empty password and no user data: the hash revision 6 keys are made from. */
function hardenedHash(salt: Buffer): Buffer {
  let key = createHash('sha256').update(salt).digest();
  for (let round = 0; ; round++) {
    const block = Buffer.concat(Array.from({ length: 64 }, () => key));
    const encrypted = aes('aes-128-cbc', key.subarray(0, 16), key.subarray(16, 32), block, true);
    let sum = 0;
    for (let index = 0; index < 16; index++) sum += encrypted[index];
    key = createHash(['sha256', 'sha384', 'sha512'][sum % 3])
      .update(encrypted)
      .digest();
    if (round >= 63 && encrypted[encrypted.length - 1] <= round + 1 - 32) return key.subarray(0, 32);
  }
}

function aes(algorithm: string, key: Buffer, iv: Buffer, data: Buffer, encrypt: boolean): Buffer {
  const cipher = encrypt ? createCipheriv(algorithm, key, iv) : createDecipheriv(algorithm, key, iv);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** RC4, written out: OpenSSL 3 leaves it out of Node's default ciphers. */
class Rc4Decipher extends Transform {
  private readonly state = new Uint8Array(256);
  private i = 0;
  private j = 0;
  constructor(key: Buffer) {
    super();
    for (let index = 0; index < 256; index++) this.state[index] = index;
    for (let index = 0, swap = 0; index < 256; index++) {
      swap = (swap + this.state[index] + key[index % key.length]) & 0xff;
      [this.state[index], this.state[swap]] = [this.state[swap], this.state[index]];
    }
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const output = Buffer.allocUnsafe(chunk.length);
    const state = this.state;
    for (let index = 0; index < chunk.length; index++) {
      this.i = (this.i + 1) & 0xff;
      this.j = (this.j + state[this.i]) & 0xff;
      const swap = state[this.i];
      state[this.i] = state[this.j];
      state[this.j] = swap;
      output[index] = chunk[index] ^ state[(state[this.i] + state[this.j]) & 0xff];
    }
    callback(null, output);
  }
}

/** AES-CBC whose first 16 bytes are the initialisation vector (the key's length picks AES-128 or AES-256). */
class AesDecipher extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private decipher: ReturnType<typeof createDecipheriv> | undefined;
  constructor(private readonly key: Buffer) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.decipher === undefined) {
      this.pending = Buffer.concat([this.pending, chunk]);
      if (this.pending.length < 16) {
        callback();
        return;
      }
      this.decipher = createDecipheriv(this.key.length === 32 ? 'aes-256-cbc' : 'aes-128-cbc', this.key, this.pending.subarray(0, 16));
      this.decipher.setAutoPadding(false);
      chunk = this.pending.subarray(16);
    }
    callback(null, this.decipher.update(chunk));
  }

  override _flush(callback: TransformCallback): void {
    try {
      callback(null, this.decipher?.final());
    } catch {
      // A last block cut short: what was decrypted before it stands, as for a reader.
      callback();
    }
  }
}
