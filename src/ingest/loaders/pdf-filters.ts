import { Transform, type TransformCallback } from 'node:stream';
import { createInflate, constants as zlibConstants } from 'node:zlib';

/**
 * Streaming decoders for the PDF filters that can make a stream larger than it is stored (PDF 32000-1, 7.4):
 * Flate (zlib), LZW, run-length, ASCII hex and ASCII base-85. Each is a Transform that holds at most one block
 * of output, so a stream can be decoded just to count its bytes, whatever it inflates to.
 */

/** Filter names as written in a stream's dictionary (full and abbreviated) → the decoder's kind. */
const FILTERS: Record<string, PdfFilterKind> = {
  FlateDecode: 'flate',
  Fl: 'flate',
  LZWDecode: 'lzw',
  LZW: 'lzw',
  RunLengthDecode: 'run-length',
  RL: 'run-length',
  ASCIIHexDecode: 'ascii-hex',
  AHx: 'ascii-hex',
  ASCII85Decode: 'ascii-85',
  A85: 'ascii-85',
};

export type PdfFilterKind = 'flate' | 'lzw' | 'run-length' | 'ascii-hex' | 'ascii-85';

/** The decoder kind of a filter name, or undefined for filters that are not undone here (images, `Crypt`). */
export function pdfFilterKind(name: string): PdfFilterKind | undefined {
  return Object.hasOwn(FILTERS, name) ? FILTERS[name] : undefined;
}

/** A Transform that undoes one filter. `earlyChange` is LZW's `/EarlyChange` (1 unless the dictionary says 0). */
export function createPdfDecoder(kind: PdfFilterKind, earlyChange = 1): Transform {
  switch (kind) {
    case 'flate':
      // PDF readers accept a stream cut short or with a bad checksum; count what inflates before that.
      return createInflate({ chunkSize: OUTPUT_BLOCK, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    case 'lzw':
      return new PushDecoder(new LzwDecoder(earlyChange));
    case 'run-length':
      return new PushDecoder(new RunLengthDecoder());
    case 'ascii-hex':
      return new PushDecoder(new AsciiHexDecoder());
    case 'ascii-85':
      return new PushDecoder(new Ascii85Decoder());
  }
}

// --- Internal helpers ---

const OUTPUT_BLOCK = 64 * 1024;

/** Collects decoded bytes and hands them on a block at a time. */
class Output {
  private block = Buffer.allocUnsafe(OUTPUT_BLOCK);
  private length = 0;
  constructor(private readonly emit: (block: Buffer) => void) {}

  byte(value: number): void {
    this.block[this.length++] = value;
    if (this.length === OUTPUT_BLOCK) this.flush();
  }

  repeat(value: number, count: number): void {
    for (let left = count; left > 0; left--) this.byte(value);
  }

  flush(): void {
    if (this.length === 0) return;
    this.emit(Buffer.from(this.block.subarray(0, this.length)));
    this.length = 0;
  }
}

interface ByteDecoder {
  /** Decode `input`; returns false once the stream's end-of-data mark is reached (later bytes are ignored). */
  push(input: Uint8Array, output: Output): boolean;
  end(output: Output): void;
}

class PushDecoder extends Transform {
  private finished = false;
  private readonly output = new Output((block) => this.push(block));
  constructor(private readonly decoder: ByteDecoder) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.finished && !this.decoder.push(chunk, this.output)) {
      // The end-of-data mark: end the output now, as zlib does at the end of a deflate stream, so whoever
      // feeds this decoder can tell that the rest of its input is not part of the stream.
      this.finished = true;
      this.output.flush();
      this.push(null);
    }
    this.output.flush();
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (!this.finished) this.decoder.end(this.output);
    this.output.flush();
    callback();
  }
}

/** LZW as PDF writes it: codes of 9 to 12 bits, most significant bit first, 256 clears the table, 257 ends. */
class LzwDecoder implements ByteDecoder {
  // Each table entry is its prefix entry plus one byte; its bytes are found by walking the prefixes back.
  private readonly prefix = new Int16Array(4096);
  private readonly suffix = new Uint8Array(4096);
  private readonly lengths = new Uint16Array(4096);
  private readonly scratch = new Uint8Array(4096);
  private nextCode = 258;
  private codeLength = 9;
  private previous = -1;
  private bits = 0;
  private bitCount = 0;

  constructor(private readonly earlyChange: number) {
    for (let code = 0; code < 256; code++) {
      this.suffix[code] = code;
      this.lengths[code] = 1;
      this.prefix[code] = -1;
    }
  }

  push(input: Uint8Array, output: Output): boolean {
    for (const byte of input) {
      this.bits = ((this.bits << 8) | byte) & 0xffffff;
      this.bitCount += 8;
      while (this.bitCount >= this.codeLength) {
        this.bitCount -= this.codeLength;
        const code = (this.bits >> this.bitCount) & ((1 << this.codeLength) - 1);
        if (!this.decode(code, output)) return false;
      }
    }
    return true;
  }

  end(): void {}

  private decode(code: number, output: Output): boolean {
    if (code === 256) {
      this.nextCode = 258;
      this.codeLength = 9;
      this.previous = -1;
      return true;
    }
    if (code === 257) return false;
    let first: number;
    if (code < 256 || (code >= 258 && code < this.nextCode)) {
      first = this.write(code, output);
    } else if (code === this.nextCode && this.previous !== -1) {
      // The entry being defined: the previous entry plus its own first byte.
      first = this.write(this.previous, output);
      output.byte(first);
    } else return false;
    if (this.previous !== -1 && this.nextCode < 4096) {
      this.prefix[this.nextCode] = this.previous;
      this.suffix[this.nextCode] = first;
      this.lengths[this.nextCode] = this.lengths[this.previous] + 1;
      this.nextCode += 1;
    }
    this.previous = code;
    if (this.nextCode + this.earlyChange >= 1 << this.codeLength && this.codeLength < 12) this.codeLength += 1;
    return true;
  }

  /** Write the bytes of entry `code`; returns its first byte. */
  private write(code: number, output: Output): number {
    const length = this.lengths[code];
    let at = code;
    for (let index = length - 1; index >= 0; index--) {
      this.scratch[index] = this.suffix[at];
      at = this.prefix[at];
    }
    for (let index = 0; index < length; index++) output.byte(this.scratch[index]);
    return this.scratch[0];
  }
}

/** Run-length: a length byte n, then n + 1 literal bytes (n < 128) or one byte repeated 257 − n times; 128 ends. */
class RunLengthDecoder implements ByteDecoder {
  private literal = 0;
  private repeat = 0;

  push(input: Uint8Array, output: Output): boolean {
    for (const byte of input) {
      if (this.literal > 0) {
        output.byte(byte);
        this.literal -= 1;
      } else if (this.repeat > 0) {
        output.repeat(byte, this.repeat);
        this.repeat = 0;
      } else if (byte === 128) return false;
      else if (byte < 128) this.literal = byte + 1;
      else this.repeat = 257 - byte;
    }
    return true;
  }

  end(): void {}
}

/** Pairs of hexadecimal digits, white space ignored, `>` ends; a last odd digit counts as if followed by 0. */
class AsciiHexDecoder implements ByteDecoder {
  private high = -1;

  push(input: Uint8Array, output: Output): boolean {
    for (const byte of input) {
      if (byte === 0x3e) {
        this.end(output);
        return false;
      }
      const digit = hexDigit(byte);
      if (digit === -1) continue;
      if (this.high === -1) this.high = digit;
      else {
        output.byte((this.high << 4) | digit);
        this.high = -1;
      }
    }
    return true;
  }

  end(output: Output): void {
    if (this.high !== -1) output.byte(this.high << 4);
    this.high = -1;
  }
}

/** Base-85 groups of five characters `!`–`u` for four bytes, `z` for four zero bytes, `~>` ends. */
class Ascii85Decoder implements ByteDecoder {
  private readonly group: number[] = [];

  push(input: Uint8Array, output: Output): boolean {
    for (const byte of input) {
      if (byte === 0x7e) {
        this.end(output);
        return false;
      }
      if (byte === 0x7a && this.group.length === 0) {
        output.repeat(0, 4);
        continue;
      }
      if (byte < 0x21 || byte > 0x75) continue;
      this.group.push(byte - 0x21);
      if (this.group.length === 5) this.writeGroup(output, 4);
    }
    return true;
  }

  end(output: Output): void {
    const count = this.group.length;
    if (count < 2) return void (this.group.length = 0);
    while (this.group.length < 5) this.group.push(84);
    this.writeGroup(output, count - 1);
  }

  private writeGroup(output: Output, bytes: number): void {
    let value = 0;
    for (const digit of this.group) value = value * 85 + digit;
    this.group.length = 0;
    for (let index = 0; index < bytes; index++) output.byte((value >>> (24 - 8 * index)) & 0xff);
  }
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}
