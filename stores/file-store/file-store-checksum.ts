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
import { AxonError } from '../../src/errors.ts';
import { memoryOf } from '../indexes/simd/wasm-runtime.ts';
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

/** Bytes hashed per call through the scratch memory (2 pages). */
const CHUNK_BYTES = 128 * 1024;
const BLOCK_BYTES = 64;
const LANES = 32;

interface ChecksumInstance {
  update(start: number, blocks: number): void;
  /** The lanes: s0..s31. */
  readonly lanes: { value: number }[];
}

let compiled: object | undefined;
/** One instance per memory it hashes in place; the scratch one hashes bytes that lie anywhere else, copied in by chunks. */
const instances = new WeakMap<object, ChecksumInstance>();
let scratch: { memory: { buffer: ArrayBuffer }; instance: ChecksumInstance } | undefined;

interface Runtime {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
}

function instanceFor(memory: object): ChecksumInstance {
  let instance = instances.get(memory);
  if (instance === undefined) {
    const runtime = (globalThis as unknown as { WebAssembly: Runtime }).WebAssembly;
    compiled ??= new runtime.Module(Buffer.from(CHECKSUM_MODULE_BASE64, 'base64'));
    const exports = new runtime.Instance(compiled, { env: { memory } }).exports;
    instance = {
      update: exports.update as ChecksumInstance['update'],
      lanes: Array.from({ length: LANES }, (_, lane) => exports[`s${lane}`] as { value: number }),
    };
    instances.set(memory, instance);
  }
  return instance;
}

function scratchSpace(): NonNullable<typeof scratch> {
  if (scratch === undefined) {
    const runtime = (globalThis as unknown as { WebAssembly: Runtime }).WebAssembly;
    const memory = new runtime.Memory({ initial: CHUNK_BYTES / 65_536, maximum: CHUNK_BYTES / 65_536 });
    scratch = { memory, instance: instanceFor(memory) };
  }
  return scratch;
}

/** The starting lanes: distinct odd multiples of the round constants. */
function initialState(): Int32Array {
  const lanes = new Int32Array(LANES);
  for (let lane = 0; lane < 16; lane++) {
    lanes[lane] = Math.imul(0x9e3779b1, 2 * lane + 1);
    lanes[16 + lane] = Math.imul(0x85ebca77, 2 * lane + 1);
  }
  return lanes;
}

class LanesChecksum {
  private readonly state = initialState();
  /** Bytes of an incomplete 64-byte block carried to the next update. */
  private readonly carry = new Uint8Array(BLOCK_BYTES);
  private carried = 0;
  private length = 0;
  private finished: string | undefined;

  update(bytes: Uint8Array): void {
    if (this.finished !== undefined) {
      throw new AxonError('INTERNAL', 'A checksum was updated after it was finished.', {
        component: 'file-store',
        details: { invariant: 'checksum-updated-before-finish' },
      });
    }
    this.length += bytes.length;
    let at = 0;
    if (this.carried > 0) {
      const taken = Math.min(BLOCK_BYTES - this.carried, bytes.length);
      this.carry.set(bytes.subarray(0, taken), this.carried);
      this.carried += taken;
      at = taken;
      if (this.carried === BLOCK_BYTES) {
        this.foldCopied(this.carry);
        this.carried = 0;
      }
    }
    const whole = (bytes.length - at) & ~(BLOCK_BYTES - 1);
    if (whole > 0) {
      const memory = memoryOf(bytes.buffer);
      if (memory !== undefined) this.run(instanceFor(memory), bytes.byteOffset + at, whole / BLOCK_BYTES);
      else this.foldCopied(bytes.subarray(at, at + whole));
      at += whole;
    }
    if (at < bytes.length) {
      this.carry.set(bytes.subarray(at), this.carried);
      this.carried += bytes.length - at;
    }
  }

  /** The checksum field's value: `lanes64:` and 16 hex digits. The last block is padded with zeros; the length is mixed in. */
  digest(): string {
    if (this.finished !== undefined) return this.finished;
    if (this.carried > 0) {
      this.carry.fill(0, this.carried);
      this.foldCopied(this.carry);
      this.carried = 0;
    }
    let hash = 0n;
    // Each step is a bijection of the running value, and takes its lane (with the lane's number) injectively.
    for (let lane = 0; lane < LANES; lane++) hash = mix64(hash ^ BigInt(this.state[lane] >>> 0) ^ (BigInt(lane) << 32n));
    hash = mix64(hash ^ BigInt(this.length));
    this.finished = `lanes64:${hash.toString(16).padStart(16, '0')}`;
    return this.finished;
  }

  /** Fold whole blocks that lie outside any known memory, through the scratch memory. */
  private foldCopied(bytes: Uint8Array): void {
    const { memory, instance } = scratchSpace();
    const target = new Uint8Array(memory.buffer);
    for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
      const size = Math.min(CHUNK_BYTES, bytes.length - at);
      target.set(bytes.subarray(at, at + size), 0);
      this.run(instance, 0, size / BLOCK_BYTES);
    }
  }

  private run(instance: ChecksumInstance, start: number, blocks: number): void {
    const { lanes } = instance;
    for (let lane = 0; lane < LANES; lane++) lanes[lane].value = this.state[lane];
    instance.update(start, blocks);
    for (let lane = 0; lane < LANES; lane++) this.state[lane] = lanes[lane].value;
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
