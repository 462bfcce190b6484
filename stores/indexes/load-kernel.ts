/**
 * The load kernel (load-kernel.wat, assembled into load-kernel-binary.ts by scripts/build-wasm.ts): work an index
 * does once per load over every id or term, in WebAssembly, which runs compiled from its first call where a fresh
 * process would run the same JavaScript loop unoptimised. One memory serves the whole process: a caller copies
 * its bytes in from address 0, runs a function, and copies out what it keeps, so nothing lives there between calls.
 */
import { LOAD_KERNEL_BASE64 } from './load-kernel-binary.ts';

/** load-kernel.wat's exports (addresses are byte offsets into its memory). */
export interface LoadKernelExports {
  /** See load-kernel.wat: a JSON array of ids read in place; 0, or what is wrong with it. */
  parse(length: number, count: number, starts: number, ends: number): number;
  /** See load-kernel.wat: ids hashed into their slots; -1, or the position of an id met twice. */
  index(count: number, starts: number, ends: number, hashes: number, slots: number, mask: number): number;
  /** See load-kernel.wat: an ASCII vocabulary's first malformed or unsorted term, or -1. */
  first_malformed_term(offsets: number, postingStarts: number, count: number): number;
  /** See load-kernel.wat: another table's first id from `from` on that this table holds too (its position here in `shared`), or -1. */
  first_shared(
    theirCount: number,
    theirHashes: number,
    theirStarts: number,
    theirEnds: number,
    theirBase: number,
    ourHashes: number,
    ourStarts: number,
    ourEnds: number,
    slots: number,
    mask: number,
    from: number,
  ): number;
  readonly ascii: { value: number };
  readonly shared: { value: number };
}

export interface LoadKernel {
  readonly memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  readonly exports: LoadKernelExports;
}

// The project's TypeScript libraries declare no WebAssembly global, so the few constructors used are typed by hand.
interface Runtime {
  Memory: new (descriptor: { initial: number; maximum: number }) => LoadKernel['memory'];
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
}

const PAGE_BYTES = 65_536;
let shared: LoadKernel | undefined;

/** The kernel, its memory grown to at least `bytes` (its buffer changes when it grows: take views after this). */
export function loadKernelWithRoom(bytes: number): LoadKernel {
  const pages = Math.max(1, Math.ceil(bytes / PAGE_BYTES));
  if (shared === undefined) {
    const runtime = (globalThis as unknown as { WebAssembly: Runtime }).WebAssembly;
    const memory = new runtime.Memory({ initial: pages, maximum: 65_536 });
    const module = new runtime.Module(Buffer.from(LOAD_KERNEL_BASE64, 'base64'));
    shared = { memory, exports: new runtime.Instance(module, { env: { memory } }).exports as unknown as LoadKernelExports };
  }
  const held = shared.memory.buffer.byteLength / PAGE_BYTES;
  if (pages > held) shared.memory.grow(pages - held);
  return shared;
}
