import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorSites } from '../../scripts/count-fixless-errors.ts';
import type { Document } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { FileStore } from '../../stores/file-store/file-store.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';

describe('every error a user can cause names its fix', () => {
  it('no error construction site in the library lacks a fix (INTERNAL, ABORTED and ones marked never shown aside)', () => {
    const sites = errorSites();
    expect(sites.length).toBeGreaterThan(200);
    const fixless = sites.filter((site) => !site.fix && !site.unshown && site.code !== 'INTERNAL' && site.code !== 'ABORTED');
    expect(fixless.map((site) => `${site.file}:${site.line} ${site.code}`)).toEqual([]);
  });

  it('store.add of a document without metadata says to give it one', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-fix-'));
    try {
      const document = { id: 'a', content: 'The office opens at 9.', sourceType: 'file', sourceName: 'hours.md', score: 0, embedding: [1, 0] };
      for (const store of [new MemoryStore(), new FileStore({ directory })]) {
        const error = await store.add([document as unknown as Document]).catch((caught: unknown) => caught);
        expect(AxonError.hasCode(error, 'INVALID_DOCUMENT')).toBe(true);
        expect((error as AxonError).message).toBe(
          `[axon] [${store.name}] documents[0].metadata must be a plain object of JSON values. Give every document a metadata object ({} when it has none), or add through rag.addDocuments, which fills it in.`,
        );
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
