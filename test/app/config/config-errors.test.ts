import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRag } from '../../../app/config/create-rag.ts';
import { ConfigError } from '../../../src/errors.ts';
import { closestName } from '../../../src/runtime/closest-name.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';

async function issuesOf(run: () => Promise<unknown> | unknown): Promise<{ path: string; message: string }[]> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration problems, all at once', () => {
  it('a misspelt top-level key does not hide the problems inside the entries, and names the key meant', async () => {
    const issues = await issuesOf(() => createRag({ embedings: { provider: 'local' }, postProcessors: [{ type: 'adaptive-threshold', multiplier: -1 }] }));
    expect(issues).toEqual([
      { path: 'embedings', message: 'unknown option "embedings" (did you mean "embeddings"?)' },
      { path: 'postProcessors[0].multiplier', message: expect.stringContaining('must be ≥ 0') },
    ]);
  });

  it("reports every well-formed entry's problems beside the malformed ones", async () => {
    const issues = await issuesOf(() =>
      createRag({
        store: { type: 'memory', topk: 3 },
        preProcessors: 'none',
        postProcessors: [{ nope: 1 }, { type: 'adaptive-treshold' }, { type: 'top-n', n: 0 }],
      }),
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      'postProcessors[0].type',
      'postProcessors[1].type',
      'postProcessors[2].n',
      'preProcessors',
      'store.topk',
    ]);
    expect(issues).toContainEqual({ path: 'store.topk', message: 'unknown option "topk" (did you mean "topK"?)' });
    expect(issues.find((issue) => issue.path === 'postProcessors[1].type')!.message).toMatch(
      /^unknown post-processor "adaptive-treshold" \(did you mean "adaptive-threshold"\?\); registered: /,
    );
  });

  it('a malformed chat section is reported once, not also as missing for the processors that need it', async () => {
    const issues = await issuesOf(() =>
      createRag({ chat: { model: 'gpt-4o-mini' }, preProcessors: [{ type: 'query-transformation', strategy: 'HYDE' }], extra: 1 }),
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual(['chat.provider', 'extra']);
  });

  it('suggests nothing for a key that is not close to any allowed one', async () => {
    const issues = await issuesOf(() => createRag({ store: { type: 'memory', colour: 'red' } }));
    expect(issues).toEqual([{ path: 'store.colour', message: 'unknown option "colour"' }]);
  });

  it('a constructor given an unknown option names the nearest one too', () => {
    expect(() => new FileStore({ directory: 'x', topk: 3 } as never)).toThrow(
      expect.objectContaining({ issues: [{ path: 'topk', message: 'unknown option "topk" (did you mean "topK"?)' }] }),
    );
  });

  it('closestName: typos, case and swaps within a third of the length; nothing for strangers', () => {
    expect(closestName('embedings', ['embeddings', 'chat', 'store'])).toBe('embeddings');
    expect(closestName('TOPK', ['topK', 'ef'])).toBe('topK');
    expect(closestName('stroe', ['store', 'chat'])).toBe('store');
    expect(closestName('x', ['ef', 'topK'])).toBeUndefined();
    expect(closestName('directory', ['path', 'topK'])).toBeUndefined();
    expect(closestName('topK', ['topK'])).toBeUndefined();
  });
});

describe('the file store\'s folder is "directory" in configuration, as in code', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'axon-config-errors-'));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(directory, { recursive: true, force: true });
  });

  it('reads "directory", relative to the configuration\'s folder', async () => {
    const rag = await createRag({ store: { type: 'file', directory: 'data' } }, { baseDirectory: directory });
    expect((rag.components().store as FileStore).directory).toBe(join(directory, 'data'));
  });

  it('still reads the old "path", with a deprecation warning', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const rag = await createRag({ store: { type: 'file', path: 'old' } }, { baseDirectory: directory });
    expect((rag.components().store as FileStore).directory).toBe(join(directory, 'old'));
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('"path" option is now "directory"'),
      expect.objectContaining({ type: 'DeprecationWarning', code: 'AXON_FILE_STORE_PATH' }),
    );
  });

  it('refuses both names at once', async () => {
    expect(await issuesOf(() => createRag({ store: { type: 'file', directory: 'a', path: 'b' } }, { baseDirectory: directory }))).toEqual([
      { path: 'store.path', message: '"path" is the old name of "directory"; give only "directory"' },
    ]);
  });
});
