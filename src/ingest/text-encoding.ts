/**
 * How a file's bytes become text: deciding from its first bytes whether it is text and in which encoding, and
 * decoding it in pieces.
 */

/**
 * How a file's bytes become text. `utf-8+windows-1252` is a file that is not valid UTF-8 throughout: its valid
 * UTF-8 sequences are read as UTF-8 and every other byte as Windows-1252 (the usual legacy encoding of Western
 * text), so one stray byte does not turn the file's "café" into "cafÃ©".
 */
export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-8+windows-1252';

/** The verdict of looking at a file's first bytes. */
export type ContentSniff = { binary: true; reason: string } | { binary: false; encoding: TextEncodingName; bomLength: number };

/**
 * Decide whether bytes are text, and in which encoding. A byte-order mark wins when what follows it is valid in
 * that encoding (UTF-16 of an even length without NUL characters); otherwise the bytes are judged without it. A
 * NUL byte means binary; valid UTF-8 is UTF-8; invalid UTF-8 with few control characters is UTF-8 with
 * Windows-1252 for the bytes that are not UTF-8, and with many it is binary.
 */
export function sniffContent(sample: Uint8Array, complete: boolean): ContentSniff {
  if (sample[0] === 0xef && sample[1] === 0xbb && sample[2] === 0xbf) {
    return { binary: false, encoding: isValidUtf8(sample.subarray(3), complete) ? 'utf-8' : 'utf-8+windows-1252', bomLength: 3 };
  }
  for (const [encoding, first, second] of [
    ['utf-16le', 0xff, 0xfe],
    ['utf-16be', 0xfe, 0xff],
  ] as const) {
    if (sample[0] !== first || sample[1] !== second) continue;
    const problem = utf16Problem(sample.subarray(2), encoding, complete);
    if (problem === undefined) return { binary: false, encoding, bomLength: 2 };
    return { binary: true, reason: `starts with a UTF-16 byte-order mark but ${problem}, so it is binary` };
  }
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
  return { binary: false, encoding: 'utf-8+windows-1252', bomLength: 0 };
}

/** Decodes a file piece by piece, as `TextDecoder` does, in one of the encodings `sniffContent` names. */
export interface PieceDecoder {
  /** The text of `bytes`; with `stream`, a character cut at the end waits for the next piece. */
  decode(bytes?: Uint8Array, options?: { stream?: boolean }): string;
}

/** A decoder for `encoding`. UTF-8 is decoded leniently: a byte that is not part of valid UTF-8 is read as Windows-1252. */
export function createPieceDecoder(encoding: TextEncodingName): PieceDecoder {
  if (encoding === 'utf-16le' || encoding === 'utf-16be') return new TextDecoder(encoding, { ignoreBOM: true });
  return new LenientUtf8Decoder();
}

// --- Internal helpers ---

/** What is wrong with UTF-16 bytes (after the byte-order mark), or undefined when nothing is. */
function utf16Problem(body: Uint8Array, encoding: 'utf-16le' | 'utf-16be', complete: boolean): string | undefined {
  if (complete && body.length % 2 === 1) return 'is an odd number of bytes long';
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(body.subarray(0, body.length - (body.length % 2)), { stream: !complete });
  } catch {
    return 'is not valid UTF-16';
  }
  return text.includes('\u0000') ? 'holds NUL characters' : undefined;
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

/**
 * The Windows-1252 character of each byte from 0x80 (0x00–0x7f are ASCII, and always valid UTF-8), as the WHATWG
 * Encoding Standard maps them. Written out because Node 20's `TextDecoder('windows-1252')` decodes 0x80–0x9f as
 * Latin-1 control characters (0x80 becomes U+0080 rather than "€").
 */
const WINDOWS_1252 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178' +
  String.fromCharCode(...Array.from({ length: 96 }, (_, index) => 0xa0 + index));

/**
 * UTF-8 where it is valid, Windows-1252 for every other byte. A piece that is valid UTF-8 (the usual case) is
 * decoded by the platform in one call; only a piece with a stray byte is walked byte by byte.
 */
class LenientUtf8Decoder implements PieceDecoder {
  private readonly strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly plain = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The start of a UTF-8 sequence cut at the end of the last piece. */
  private carry: Uint8Array = new Uint8Array(0);

  decode(input: Uint8Array = new Uint8Array(0), options: { stream?: boolean } = {}): string {
    const bytes = this.carry.length === 0 ? input : concatenate(this.carry, input);
    const end = options.stream ? completeEnd(bytes) : bytes.length;
    this.carry = bytes.slice(end);
    const body = bytes.subarray(0, end);
    try {
      return this.strict.decode(body);
    } catch {
      return this.walk(body);
    }
  }

  private walk(bytes: Uint8Array): string {
    const parts: string[] = [];
    let runStart = 0;
    let index = 0;
    while (index < bytes.length) {
      if (bytes[index] < 0x80) {
        index += 1;
        continue;
      }
      const length = sequenceLength(bytes, index);
      if (length > 0) {
        index += length;
        continue;
      }
      parts.push(this.plain.decode(bytes.subarray(runStart, index)), WINDOWS_1252[bytes[index] - 0x80]);
      index += 1;
      runStart = index;
    }
    parts.push(this.plain.decode(bytes.subarray(runStart)));
    return parts.join('');
  }
}

/**
 * The length of the valid UTF-8 sequence starting at `index` (2 to 4), or 0 when the bytes there are not one
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or -1 when they are a valid start cut
 * short by the end of `bytes`.
 */
function sequenceLength(bytes: Uint8Array, index: number): number {
  const lead = bytes[index];
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  for (let offset = 1; offset < length; offset++) {
    if (index + offset >= bytes.length) return -1;
    const byte = bytes[index + offset];
    if (offset === 1 ? byte < low || byte > high : byte < 0x80 || byte > 0xbf) return 0;
  }
  return length;
}

/** Where the bytes end without a valid UTF-8 sequence cut short: that start is held for the next piece. */
function completeEnd(bytes: Uint8Array): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const index = bytes.length - back;
    if (bytes[index] < 0x80) return bytes.length;
    if (bytes[index] >= 0xc0) return sequenceLength(bytes, index) === -1 ? index : bytes.length;
  }
  return bytes.length;
}

function concatenate(left: Uint8Array, right: Uint8Array): Uint8Array {
  const joined = new Uint8Array(left.length + right.length);
  joined.set(left);
  joined.set(right, left.length);
  return joined;
}
