import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxonError } from '../../src/errors.ts';
import { lazyModule } from '../../src/runtime/lazy-module.ts';
import { rejectionOf } from '../helpers/provider-test-helpers.ts';

// Node's own import, from a module it loads itself: the error a missing package really raises in an application.
let folder: string;
let nativeImport: (specifier: string) => Promise<unknown>;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'axon-lazy-module-'));
  await writeFile(join(folder, 'native-import.cjs'), 'module.exports = (specifier) => import(specifier);\n');
  await writeFile(join(folder, 'broken.mjs'), 'throw new Error("broken on load");\n');
  nativeImport = createRequire(import.meta.url)(join(folder, 'native-import.cjs'));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

describe('lazyModule', () => {
  it('names a package that is not installed and the command that installs it', async () => {
    const module = lazyModule('axon-test-absent-package', 'pgvector-store', () => nativeImport('axon-test-absent-package'));
    const error = await rejectionOf(module.load());
    expect(AxonError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'DEPENDENCY_MISSING', component: 'pgvector-store' });
    expect((error as Error).message).toContain('pgvector-store needs the package "axon-test-absent-package", which is not installed.');
    expect((error as AxonError).fix).toBe(
      'Install it in your application: npm install axon-test-absent-package (an optional peer dependency of axon-rag, installed only by applications that use it).',
    );
  });

  it('tells a package that fails to load from one that is missing, and tries again on the next call', async () => {
    let calls = 0;
    const module = lazyModule('broken', 'qdrant-store', () => {
      calls += 1;
      return nativeImport(join(folder, 'broken.mjs'));
    });
    const error = await rejectionOf(module.load());
    expect(error).toMatchObject({ code: 'DEPENDENCY_MISSING' });
    expect((error as Error).message).toContain('Cannot load the package "broken" (broken on load)');
    await rejectionOf(module.load());
    expect(calls).toBe(2);
    expect(module.loaded()).toBeUndefined();
  });

  it('loads once and keeps the module', async () => {
    let calls = 0;
    const module = lazyModule('node:path', 'test', async () => {
      calls += 1;
      return { value: 1 };
    });
    expect(await module.load()).toEqual({ value: 1 });
    await module.load();
    expect(calls).toBe(1);
    expect(module.loaded()).toEqual({ value: 1 });
  });
});
