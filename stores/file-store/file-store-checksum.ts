/**
 * The checksums the manifest records for the files it lists (segments, index snapshots). They are fed the
 * bytes in file order wherever the bytes lie, so a file read in parts (the vectors straight into WebAssembly
 * memory, the rest into a buffer) is checked without being assembled again.
 *
 * Files written since manifest version 3 record `checksum: 'lanes64:<16 hex digits>'`, computed by checksum.wat
 * (SIMD, several GB/s): the bytes are read as 32-bit words, word `i` feeds lanes `i mod 16` of two sets of
 * accumulators through xxHash32-style rounds, and the 32 lanes and the length are mixed into 64 bits. Every
 * round is a bijection of the word it takes, so any change confined to one 32-bit word, such as a flipped bit,
 * is always detected; other damage escapes only if both accumulator sets of every lane it touches collide.
 * Files of older stores carry `sha256` (SHA-256 of the file), which is still verified.
 */
import { createHash } from 'node:crypto';
import type { AxonError } from '../../src/errors.ts';
import { CHECKSUM_MODULE_BASE64 } from './checksum-binary.ts';

/** A checksum being computed over a file's bytes, fed in file order. */
export interface ContentChecksum {
  update(bytes: Uint8Array): void;
  /** Throw `corrupt(problem)` unless the bytes fed match the recorded checksum. */
  verify(problem: string): void;
}

/** What a manifest entry records about its file's content: `checksum` (written now) or `sha256` (older stores). */
export interface ChecksumFields {
  checksum?: string;
  sha256?: string;
}

/** The pattern of a `checksum` field. */
export const CHECKSUM_PATTERN = /^lanes64:[0-9a-f]{16}$/;

/** The checksum field of a file made of `parts`, in order, for its manifest entry. */
export function checksumOf(parts: readonly Uint8Array[]): { checksum: string } {
  const hash = new LanesChecksum();
  for (const part of parts) hash.update(part);
  return { checksum: hash.digest() };
}

/** A checksum to verify against what `entry` records (its `checksum`, else its `sha256`). */
export function contentChecksum(entry: ChecksumFields, corrupt: (problem: string) => AxonError): ContentChecksum {
  if (entry.checksum !== undefined) {
    const hash = new LanesChecksum();
    return {
      update: (bytes) => hash.update(bytes),
      verify: (problem) => {
        if (`${hash.digest()}` !== entry.checksum) throw corrupt(problem);
      },
    };
  }
  const hash = createHash('sha256');
  return {
    update: (bytes) => {
      hash.update(bytes);
    },
    verify: (problem) => {
      if (hash.digest('hex') !== entry.sha256) throw corrupt(problem);
    },
  };
}

// --- Internal helpers ---

/** Bytes of state at the start of the module's memory: two sets of 16 lanes of 32 bits. */
const STATE_BYTES = 128;
/** Bytes hashed per call, after the state; the memory is 3 pages (192 KiB). */
const CHUNK_BYTES = 128 * 1024;
const BLOCK_BYTES = 64;

interface ChecksumModule {
  memory: { buffer: ArrayBuffer };
  update(start: number, blocks: number): void;
}

let instance: ChecksumModule | undefined;

/** The module, compiled and instantiated once per process; its memory is scratch space shared by every checksum (each call is synchronous). */
function checksumModule(): ChecksumModule {
  if (instance === undefined) {
    const runtime = (
      globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object) => { exports: unknown } } }
    ).WebAssembly;
    instance = new runtime.Instance(new runtime.Module(Buffer.from(CHECKSUM_MODULE_BASE64, 'base64'))).exports as ChecksumModule;
  }
  return instance;
}

/** The starting lanes: distinct odd multiples of the round constants. */
function initialState(): Uint8Array {
  const lanes = new Uint32Array(STATE_BYTES / 4);
  for (let lane = 0; lane < 16; lane++) {
    lanes[lane] = Math.imul(0x9e3779b1, 2 * lane + 1) >>> 0;
    lanes[16 + lane] = Math.imul(0x85ebca77, 2 * lane + 1) >>> 0;
  }
  return new Uint8Array(lanes.buffer);
}

class LanesChecksum {
  private readonly state = initialState();
  /** Bytes of an incomplete 64-byte block carried to the next update. */
  private readonly carry = new Uint8Array(BLOCK_BYTES);
  private carried = 0;
  private length = 0;
  private finished: string | undefined;

  update(bytes: Uint8Array): void {
    if (this.finished !== undefined) throw new Error('checksum already finished');
    this.length += bytes.length;
    let at = 0;
    const module = checksumModule();
    const memory = new Uint8Array(module.memory.buffer);
    memory.set(this.state, 0);
    if (this.carried > 0) {
      const taken = Math.min(BLOCK_BYTES - this.carried, bytes.length);
      this.carry.set(bytes.subarray(0, taken), this.carried);
      this.carried += taken;
      at = taken;
      if (this.carried === BLOCK_BYTES) {
        memory.set(this.carry, STATE_BYTES);
        module.update(STATE_BYTES, 1);
        this.carried = 0;
      }
    }
    while (bytes.length - at >= BLOCK_BYTES) {
      const size = Math.min(CHUNK_BYTES, (bytes.length - at) & ~(BLOCK_BYTES - 1));
      memory.set(bytes.subarray(at, at + size), STATE_BYTES);
      module.update(STATE_BYTES, size / BLOCK_BYTES);
      at += size;
    }
    if (at < bytes.length) {
      this.carry.set(bytes.subarray(at), this.carried);
      this.carried += bytes.length - at;
    }
    this.state.set(memory.subarray(0, STATE_BYTES));
  }

  /** The checksum field's value: `lanes64:` and 16 hex digits. The last block is padded with zeros; the length is mixed in. */
  digest(): string {
    if (this.finished !== undefined) return this.finished;
    if (this.carried > 0) {
      const module = checksumModule();
      const memory = new Uint8Array(module.memory.buffer);
      memory.set(this.state, 0);
      memory.fill(0, STATE_BYTES, STATE_BYTES + BLOCK_BYTES);
      memory.set(this.carry.subarray(0, this.carried), STATE_BYTES);
      module.update(STATE_BYTES, 1);
      this.state.set(memory.subarray(0, STATE_BYTES));
    }
    const lanes = new Uint32Array(this.state.buffer, this.state.byteOffset, STATE_BYTES / 4);
    let hash = 0n;
    // Each step is a bijection of the running value, and takes its lane (with the lane's number) injectively.
    for (let lane = 0; lane < lanes.length; lane++) hash = mix64(hash ^ BigInt(lanes[lane]) ^ (BigInt(lane) << 32n));
    hash = mix64(hash ^ BigInt(this.length));
    this.finished = `lanes64:${hash.toString(16).padStart(16, '0')}`;
    return this.finished;
  }
}

/** MurmurHash3's 64-bit finaliser: a bijection of 64-bit values that spreads every bit. */
function mix64(value: bigint): bigint {
  let mixed = BigInt.asUintN(64, value);
  mixed ^= mixed >> 33n;
  mixed = BigInt.asUintN(64, mixed * 0xff51afd7ed558ccdn);
  mixed ^= mixed >> 33n;
  mixed = BigInt.asUintN(64, mixed * 0xc4ceb9fe1a85ec53n);
  mixed ^= mixed >> 33n;
  return mixed;
}
