/**
 * Assemble the WebAssembly search kernel from its text source.
 *
 *   npx tsx scripts/build-wasm.ts           # writes stores/indexes/simd/search-kernel.wasm
 *   npx tsx scripts/build-wasm.ts --check   # exits 1 if the committed .wasm differs from the .wat
 *
 * The .wasm is committed so users need no toolchain; a test assembles the .wat again and compares bytes,
 * so the two cannot drift. wabt writes no name section unless asked, which keeps the output byte-stable.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import wabtFactory from 'wabt';

export const KERNEL_SOURCE = fileURLToPath(new URL('../stores/indexes/simd/search-kernel.wat', import.meta.url));
export const KERNEL_BINARY = fileURLToPath(new URL('../stores/indexes/simd/search-kernel.wasm', import.meta.url));

/** Assemble WebAssembly text (with SIMD) into validated binary bytes. */
export async function assembleKernel(source: string, fileName = 'search-kernel.wat'): Promise<Uint8Array> {
  const wabt = await wabtFactory();
  const module = wabt.parseWat(fileName, source, { simd: true });
  try {
    module.resolveNames();
    module.validate();
    return module.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

async function main(): Promise<void> {
  const bytes = await assembleKernel(await readFile(KERNEL_SOURCE, 'utf8'));
  if (process.argv.includes('--check')) {
    const committed = new Uint8Array(await readFile(KERNEL_BINARY));
    const same = committed.length === bytes.length && committed.every((byte, index) => byte === bytes[index]);
    console.log(same ? 'search-kernel.wasm matches search-kernel.wat' : 'search-kernel.wasm is stale: run npx tsx scripts/build-wasm.ts');
    process.exitCode = same ? 0 : 1;
    return;
  }
  await writeFile(KERNEL_BINARY, bytes);
  console.log(`wrote ${KERNEL_BINARY} (${bytes.length} bytes)`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
