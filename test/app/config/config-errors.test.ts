import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfigFile } from '../../../app/config/config-file.ts';
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
      { path: 'embedings', code: 'unrecognized_keys', message: 'unknown option "embedings" (did you mean "embeddings"?)' },
      { path: 'postProcessors[0].multiplier', code: 'too_small', message: expect.stringContaining('must be ≥ 0') },
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
    expect(issues).toContainEqual({ path: 'store.topk', code: 'unrecognized_keys', message: 'unknown option "topk" (did you mean "topK"?)' });
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
    expect(issues).toEqual([{ path: 'store.colour', code: 'unrecognized_keys', message: 'unknown option "colour"' }]);
  });

  it('a constructor given an unknown option names the nearest one too', () => {
    expect(() => new FileStore({ directory: 'x', topk: 3 } as never)).toThrow(
      expect.objectContaining({ issues: [{ path: 'topk', code: 'unrecognized_keys', message: 'unknown option "topk" (did you mean "topK"?)' }] }),
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
      { path: 'store.path', code: 'custom', message: '"path" is the old name of "directory"; give only "directory"' },
    ]);
  });
});

describe('configuration messages that name the fix', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'axon-config-messages-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('a misspelt section with another ending names the section meant', async () => {
    expect(await issuesOf(() => createRag({ embedder: { provider: 'local' } }))).toEqual([
      { path: 'embedder', code: 'unrecognized_keys', message: 'unknown option "embedder" (did you mean "embeddings"?)' },
    ]);
    expect(closestName('embedder', ['embeddings', 'chat', 'store'])).toBe('embeddings');
    expect(closestName('conf', ['config', 'context', 'store'])).toBe('config');
    expect(closestName('storage', ['chat', 'embeddings'])).toBeUndefined();
  });

  it('a JSON syntax error gives the line, the column and the text there', async () => {
    await writeFile(join(directory, 'axon.config.json'), '{\n  "store": { "type": "file" },\n  "chat": { "provider": "openai", }\n}\n');
    const error = await loadConfigFile(join(directory, 'axon.config.json')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      {
        path: '',
        code: 'invalid_json',
        message: expect.stringMatching(/^not valid JSON at line 3, column 35 in "\\"chat\\": \{ \\"provider\\": \\"openai\\", \}": .+/),
      },
    ]);
    expect((error as ConfigError).issues[0].message).not.toMatch(/position/);
    await writeFile(join(directory, 'cut.json'), '{\n  "store": {');
    const cut = await loadConfigFile(join(directory, 'cut.json')).catch((caught: unknown) => caught);
    expect((cut as ConfigError).issues[0].message).toMatch(/^not valid JSON at line 2, column 13/);
  });

  it('a base URL without its scheme says which URL to write', async () => {
    const issues = await issuesOf(() =>
      createRag({
        chat: { provider: 'openai', baseURL: 'localhost:11434/v1' },
        embeddings: { provider: 'jina', baseURL: 'api.jina.ai/v1', apiKey: 'k' },
        postProcessors: [{ type: 'localai-reranker', host: 'localhost:8080' }],
      }),
    );
    expect(issues).toEqual([
      { path: 'embeddings.baseURL', code: 'custom', message: '"api.jina.ai/v1" has no scheme: write "https://api.jina.ai/v1"' },
      { path: 'chat.baseURL', code: 'custom', message: '"localhost:11434/v1" has no scheme: write "http://localhost:11434/v1"' },
      { path: 'postProcessors[0].host', code: 'custom', message: '"localhost:8080" has no scheme: write "http://localhost:8080"' },
    ]);
  });
});

describe('TypeScript plugins', () => {
  // The runtime's own import, not the test runner's (which compiles TypeScript): what `axon` does under plain Node.
  // A CommonJS module loaded by Node's require keeps Node's own dynamic import.
  let nativeImport: (url: string) => Promise<unknown>;
  let helperDirectory: string;
  beforeAll(async () => {
    helperDirectory = await mkdtemp(join(tmpdir(), 'axon-native-import-'));
    const helper = join(helperDirectory, 'native-import.cjs');
    await writeFile(helper, 'module.exports = (url) => import(url);\n');
    nativeImport = createRequire(import.meta.url)(helper);
  });
  afterAll(() => rm(helperDirectory, { recursive: true, force: true }));
  const stripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'axon-ts-plugin-'));
    await writeFile(
      join(directory, 'axon-plugins.ts'),
      `import { z } from 'zod';
const options: z.ZodType = z.object({ keep: z.number() }).strict();
export function register(registry: { register(definition: unknown): void }): void {
  registry.register({ kind: 'post-processor', name: 'keep-first', options, create: (parsed: { keep: number }) => ({ name: 'keep-first', process: async (_question: string, documents: unknown[]) => documents.slice(0, parsed.keep) }) });
}
`,
    );
    await writeFile(
      join(directory, 'axon.config.json'),
      JSON.stringify({ plugins: ['./axon-plugins.ts'], store: { type: 'memory' }, postProcessors: [{ type: 'keep-first', keep: 1 }] }),
    );
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it.skipIf(stripsTypes)('loads a .ts plugin through the tsx installed in the application', async () => {
    await mkdir(join(directory, 'node_modules'));
    for (const name of ['tsx', 'zod']) await symlink(join(process.cwd(), 'node_modules', name), join(directory, 'node_modules', name), 'dir');
    const loaded = await loadConfigFile(join(directory, 'axon.config.json'), undefined, { importModule: nativeImport });
    const rag = await createRag(loaded.config, { registry: loaded.registry, baseDirectory: loaded.baseDirectory });
    expect(rag.components().postProcessors.map((processor) => processor.name)).toEqual(['keep-first']);
  });

  it.skipIf(stripsTypes)('without tsx, says exactly what to do', async () => {
    const error = await loadConfigFile(join(directory, 'axon.config.json'), undefined, { importModule: nativeImport }).catch((caught: unknown) => caught);
    expect((error as ConfigError).issues).toEqual([
      {
        path: 'plugins[0]',
        code: 'plugin_invalid',
        message: expect.stringMatching(/^cannot load \.\/axon-plugins\.ts: Node \d+\.\d+\.\d+ does not load TypeScript by itself/),
      },
    ]);
    expect((error as ConfigError).issues[0].message).toContain(
      'does not load TypeScript by itself ("Unknown file extension .ts"). Install tsx in your application (npm install --save-dev tsx) and axon loads the plugin through it, or compile the plugin to JavaScript and list the .js file, or run Node 22.18 or later, which strips types.',
    );
  });
});
