import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILT_IN_COMPONENTS, createRegistry } from '../../../app/config/built-ins.ts';
import { loadConfigFile } from '../../../app/config/config-file.ts';
import { ConfiguredRAG, createRag } from '../../../app/config/create-rag.ts';
import { componentImplementation, defineComponent } from '../../../app/config/registry.ts';
import type { Document } from '../../../src/document.ts';
import { ConfigError } from '../../../src/errors.ts';
import { ScriptedChat } from '../../helpers/scripted-chat.ts';
import { MemoryChatHistory } from '../../../src/conversation/memory-chat-history.ts';
import { FileChatHistory } from '../../../stores/file-store/file-chat-history.ts';
import { startOpenAIServer } from '../../servers/openai-server.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-config-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function issuesOf(run: () => Promise<unknown>): Promise<{ path: string; message: string }[]> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** The smallest options each built-in needs to be constructed without a network call. */
const minimalOptions: Record<string, Record<string, unknown>> = {
  'embeddings:openai': { apiKey: 'sk-test', model: 'text-embedding-3-small' },
  'embeddings:cohere': { apiKey: 'co-test' },
  'embeddings:jina': { apiKey: 'jina-test' },
  'chat:openai': { apiKey: 'sk-test' },
  'chat:cohere': { apiKey: 'co-test' },
  'post-processor:jina-reranker': { apiKey: 'jina-test' },
  'post-processor:cohere-reranker': { apiKey: 'co-test' },
  'chat-history:postgres': { url: 'postgres://axon@127.0.0.1:1/axon' },
  'embeddings:gemini': { apiKey: 'gemini-test' },
  'embeddings:voyage': { apiKey: 'voyage-test' },
  'embeddings:mistral': { apiKey: 'mistral-test' },
  'embeddings:azure-openai': { apiKey: 'azure-test', endpoint: 'https://my-resource.openai.azure.com', deployment: 'embeddings' },
  'chat:anthropic': { apiKey: 'anthropic-test' },
  'chat:gemini': { apiKey: 'gemini-test' },
  'chat:mistral': { apiKey: 'mistral-test' },
  'chat:azure-openai': { apiKey: 'azure-test', endpoint: 'https://my-resource.openai.azure.com', deployment: 'chat' },
  'post-processor:voyage-reranker': { apiKey: 'voyage-test' },
  'store:pgvector': { url: 'postgres://axon@127.0.0.1:5432/axon' },
};

describe('createRag', () => {
  it('builds the embedded default from an empty configuration', async () => {
    const rag = await createRag({}, { baseDirectory: directory });
    expect(rag).toBeInstanceOf(ConfiguredRAG);
    const parts = rag.components();
    expect(parts.embeddings.name).toBe('local-hash-embeddings');
    expect(parts.store.name).toBe('file-store');
    expect(parts.chat).toBeUndefined();
  });

  it.each(BUILT_IN_COMPONENTS.map((definition) => [definition.kind, definition.name] as const))('reaches the built-in %s "%s" by name', async (kind, name) => {
    const options = minimalOptions[`${kind}:${name}`] ?? {};
    const chat = { provider: 'openai', apiKey: 'sk-test' };
    const config =
      kind === 'embeddings'
        ? { embeddings: { provider: name, ...options } }
        : kind === 'chat'
          ? { chat: { provider: name, ...options } }
          : kind === 'store'
            ? { store: { type: name, ...options, ...(name === 'file' ? { directory: 'store' } : {}) } }
            : kind === 'pre-processor'
              ? { chat, preProcessors: [{ type: name, ...options }] }
              : kind === 'chat-history'
                ? { conversations: { history: { type: name, ...options } } }
                : { chat, postProcessors: [{ type: name, ...options }] };
    const rag = await createRag(config, { baseDirectory: directory });
    const parts = rag.components();
    const built =
      kind === 'chat-history'
        ? rag.conversation().history
        : kind === 'embeddings'
          ? parts.embeddings
          : kind === 'chat'
            ? parts.chat
            : kind === 'store'
              ? parts.store
              : kind === 'pre-processor'
                ? parts.preProcessors[0]
                : parts.postProcessors[0];
    expect(built).toBeDefined();
    expect(typeof built!.name).toBe('string');
  });

  it('reports every mistake at once, each with its path', async () => {
    const issues = await issuesOf(() =>
      createRag(
        {
          embeddings: { provider: 'opnai' },
          store: { type: 'file', topK: 0 },
          preProcessors: [{ type: 'query-transformation', strategy: 'HYDE' }],
          postProcessors: [
            { type: 'top-n', n: 3 },
            { type: 'adaptive-threshold', multiplier: -1 },
            { type: 'cohere-reranker', apiKey: { env: 'AXON_TEST_UNSET_KEY' } },
          ],
          extra: true,
        },
        { environment: {} },
      ),
    );
    // the unknown top-level key does not hide the problems inside the entries
    expect(issues.map((issue) => issue.path).sort()).toEqual(
      ['embeddings.provider', 'extra', 'postProcessors[1].multiplier', 'postProcessors[2].apiKey', 'preProcessors[0].type', 'store.topK'].sort(),
    );
    expect(issues.find((issue) => issue.path === 'extra')!.message).toBe('unknown option "extra"');

    const second = await issuesOf(() =>
      createRag(
        {
          embeddings: { provider: 'opnai' },
          store: { type: 'file', topK: 0 },
          preProcessors: [{ type: 'query-transformation', strategy: 'HYDE' }],
          postProcessors: [
            { type: 'top-n', n: 3 },
            { type: 'adaptive-threshold', multiplier: -1 },
            { type: 'cohere-reranker', apiKey: { env: 'AXON_TEST_UNSET_KEY' } },
          ],
        },
        { environment: {} },
      ),
    );
    const byPath = Object.fromEntries(second.map((issue) => [issue.path, issue.message]));
    expect(Object.keys(byPath).sort()).toEqual(
      ['embeddings.provider', 'postProcessors[1].multiplier', 'postProcessors[2].apiKey', 'preProcessors[0].type', 'store.topK'].sort(),
    );
    expect(byPath['embeddings.provider']).toMatch(
      /unknown embeddings "opnai" \(did you mean "openai"\?\); registered: azure-openai, cohere, gemini, jina, local, mistral, ollama, openai, voyage/,
    );
    expect(byPath['postProcessors[1].multiplier']).toMatch(/must be ≥ 0/);
    expect(byPath['postProcessors[2].apiKey']).toBe('environment variable AXON_TEST_UNSET_KEY is not set');
    expect(byPath['preProcessors[0].type']).toMatch(/needs a chat model/);
  });

  it('renders the problems as one message naming each path', async () => {
    await expect(createRag({ postProcessors: [{ type: 'fixed-threshold', threshold: 'high' }] })).rejects.toThrow(/postProcessors\[0\]\.threshold: /);
  });

  it('resolves { "env": NAME } references from the environment', async () => {
    const rag = await createRag(
      { chat: { provider: 'openai', apiKey: { env: 'MY_KEY' } } },
      { environment: { MY_KEY: 'sk-from-env' }, baseDirectory: directory },
    );
    expect(rag.components().chat?.name).toBe('openai-chat');
    expect(JSON.stringify(rag.components().chat)).not.toContain('sk-from-env');
  });

  it('passes the pipeline chat model to processors that need one', async () => {
    const registry = createRegistry();
    const chat = new ScriptedChat(['["x"]']);
    registry.register(defineComponent({ kind: 'chat', name: 'scripted', options: z.object({}).strict(), create: () => chat }));
    const rag = await createRag(
      { chat: { provider: 'scripted' }, postProcessors: [{ type: 'llm-reranker', topN: 2 }] },
      { registry, baseDirectory: directory },
    );
    expect(rag.components().chat).toBe(chat);
    expect(rag.components().postProcessors[0].name).toBe('llm-reranker');
  });

  it('costs each run by the configured, dated price table', async () => {
    const server = await startOpenAIServer();
    try {
      const rag = await createRag(
        {
          embeddings: { provider: 'openai', apiKey: 'sk-test', baseURL: `${server.url}/v1` },
          store: { type: 'file', directory: 'store' },
          prices: { currency: 'USD', asOf: '2026-11-30', models: { 'openai-embeddings/text-embedding-3-small': { inputPerMillion: 0.02 } } },
        },
        { baseDirectory: directory },
      );
      await rag.addDocuments([{ content: 'Refunds take 14 days.' }]);
      const result = await rag.retrieve('How long do refunds take?');
      await rag.close();
      // The loopback server bills one token a text: one question.
      expect(result.usage).toMatchObject({ cost: 0.02 / 1_000_000, currency: 'USD', pricesAsOf: '2026-11-30' });
    } finally {
      await server.close();
    }
  });

  it('refuses a price table without its date, naming the path', async () => {
    const issues = await issuesOf(() => createRag({ prices: { currency: 'USD', models: {} } }, { baseDirectory: directory }));
    expect(issues.map((issue) => issue.path)).toEqual(['prices.asOf']);
  });

  it('refuses to register a name twice unless asked to replace it', async () => {
    const registry = createRegistry();
    const definition = defineComponent({
      kind: 'post-processor',
      name: 'top-n',
      options: z.object({}),
      create: () => ({ name: 'mine', process: async (_q: string, documents: Document[]) => documents }),
    });
    expect(() => registry.register(definition)).toThrow(/already registered/);
    registry.register(definition, { replace: true });
    expect((await createRag({ postProcessors: [{ type: 'top-n' }] }, { registry, baseDirectory: directory })).components().postProcessors[0].name).toBe('mine');
  });
});

describe('conversations.history', () => {
  it('keeps conversations beside the file store by default, or in the folder it names', async () => {
    const beside = await createRag({ store: { type: 'file', directory: 'store' }, conversations: { history: 'file' } }, { baseDirectory: directory });
    const history = beside.conversation().history as FileChatHistory;
    expect(history).toBeInstanceOf(FileChatHistory);
    expect(history.folder).toBe(join(directory, 'store', 'conversations'));
    // One history per pipeline: each conversation() shares it.
    expect(beside.conversation().history).toBe(history);

    const elsewhere = await createRag({ conversations: { history: { type: 'file', directory: 'talk' } } }, { baseDirectory: directory });
    expect((elsewhere.conversation().history as FileChatHistory).folder).toBe(join(directory, 'talk', 'conversations'));
  });

  it('keeps them in memory when the section is absent', async () => {
    const rag = await createRag({}, { baseDirectory: directory });
    expect(rag.conversation().history).toBeInstanceOf(MemoryChatHistory);
  });

  it('reports an unknown history, a bad option and an unknown key with their paths', async () => {
    const unknown = await issuesOf(() => createRag({ conversations: { history: 'redis' } }, { baseDirectory: directory }));
    expect(unknown.map((issue) => issue.path)).toEqual(['conversations.history.type']);
    const badOption = await issuesOf(() => createRag({ conversations: { history: { type: 'postgres', table: 'Bad-Name' } } }, { baseDirectory: directory }));
    expect(badOption.map((issue) => issue.path)).toEqual(['conversations.history.table']);
    const unknownKey = await issuesOf(() => createRag({ conversations: { store: 'file' } }, { baseDirectory: directory }));
    expect(unknownKey.map((issue) => issue.path)).toEqual(['conversations.store']);
  });
});

describe('lazily registered components', () => {
  it('loads the modules of the components a configuration names, and no others', async () => {
    const loads: string[] = [];
    const registry = createRegistry();
    const lazy = (name: string) => ({
      kind: 'post-processor' as const,
      name,
      load: async () => {
        loads.push(name);
        return componentImplementation('post-processor', {
          options: z.object({ keep: z.number().int().min(1) }).strict(),
          create: (options) => ({ name, process: async (_query: unknown, documents: Document[]) => documents.slice(0, options.keep) }),
        });
      },
    });
    registry.register(lazy('first-lazy')).register(lazy('second-lazy'));
    const rag = await createRag({ store: { type: 'memory' }, postProcessors: [{ type: 'second-lazy', keep: 2 }] }, { registry, baseDirectory: directory });
    expect(loads).toEqual(['second-lazy']);
    expect(rag.components().postProcessors.map((processor) => processor.name)).toEqual(['second-lazy']);
    // The loaded module is kept: a second pipeline does not load it again, and its options are still validated.
    const issues = await issuesOf(() => createRag({ store: { type: 'memory' }, postProcessors: [{ type: 'second-lazy', keep: 0 }] }, { registry }));
    expect(loads).toEqual(['second-lazy']);
    expect(issues.map((issue) => issue.path)).toEqual(['postProcessors[0].keep']);
  });

  it('pipelines built at the same time share one load of a module', async () => {
    let loads = 0;
    const registry = createRegistry();
    registry.register({
      kind: 'post-processor',
      name: 'slow-lazy',
      load: async () => {
        loads += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return componentImplementation('post-processor', {
          options: z.object({}).strict(),
          create: () => ({ name: 'slow-lazy', process: async (_query: unknown, documents: Document[]) => documents }),
        });
      },
    });
    const config = { store: { type: 'memory' }, postProcessors: [{ type: 'slow-lazy' }] };
    await Promise.all([createRag(config, { registry }), createRag(config, { registry })]);
    expect(loads).toBe(1);
  });

  it('reports a component whose module cannot be loaded at its path, beside the other problems', async () => {
    const registry = createRegistry();
    registry.register({
      kind: 'post-processor',
      name: 'broken-module',
      load: () => Promise.reject(new Error('Cannot find module ./missing.js')),
    });
    const issues = await issuesOf(() => createRag({ postProcessors: [{ type: 'broken-module' }, { type: 'top-n', n: -1 }] }, { registry }));
    expect(issues).toEqual([
      { path: 'postProcessors[0].type', code: 'unavailable', message: expect.stringContaining('could not be loaded: Cannot find module ./missing.js') },
      { path: 'postProcessors[1].n', code: 'too_small', message: expect.any(String) },
    ]);
  });
});

describe('configuration files', () => {
  it('uses a custom post-processor registered by a plugin module named in the file', async () => {
    await writeFile(
      join(directory, 'plugins.ts'),
      `import { z } from 'zod';
export function register(registry) {
  registry.register({
    kind: 'post-processor',
    name: 'keep-source',
    options: z.object({ source: z.string() }).strict(),
    create: ({ source }) => ({ name: 'keep-source', process: async (_question, documents) => documents.filter((document) => document.sourceName === source) }),
  });
}
`,
    );
    await writeFile(
      join(directory, 'axon.config.json'),
      JSON.stringify({ plugins: ['./plugins.ts'], store: { type: 'memory' }, postProcessors: [{ type: 'keep-source', source: 'b.md' }] }),
    );
    const loaded = await loadConfigFile(join(directory, 'axon.config.json'));
    const rag = await createRag(loaded.config, { registry: loaded.registry, baseDirectory: loaded.baseDirectory, source: loaded.source });
    await rag.addDocuments([
      { content: 'alpha beta', sourceName: 'a.md', sourceType: 'file' },
      { content: 'alpha gamma', sourceName: 'b.md', sourceType: 'file' },
    ]);
    const { documents, trace } = await rag.retrieve('alpha');
    expect(documents.map((document) => document.sourceName)).toEqual(['b.md']);
    expect(trace.stages.at(-1)?.name).toBe('keep-source');
  });

  it('reports malformed JSON and unloadable plugins as configuration errors naming the file', async () => {
    await writeFile(join(directory, 'broken.json'), '{ "store": ');
    await expect(loadConfigFile(join(directory, 'broken.json'))).rejects.toThrow(/broken\.json.*\n.*not valid JSON/);
    await writeFile(join(directory, 'plugin.json'), JSON.stringify({ plugins: ['./missing.ts'] }));
    await expect(loadConfigFile(join(directory, 'plugin.json'))).rejects.toThrow(/plugins\[0\]: cannot load \.\/missing\.ts/);
  });

  it('resolves a file store path relative to the configuration file', async () => {
    await writeFile(join(directory, 'axon.config.json'), JSON.stringify({ store: { type: 'file', directory: 'data' } }));
    const loaded = await loadConfigFile(join(directory, 'axon.config.json'));
    const rag = await createRag(loaded.config, { registry: loaded.registry, baseDirectory: loaded.baseDirectory });
    await rag.addDocuments([{ content: 'persisted text' }]);
    const { FileStore } = await import('../../../stores/file-store/file-store.ts');
    expect(await new FileStore({ directory: join(directory, 'data') }).count()).toBe(1);
  });
});

describe('docs/configuration.md', () => {
  it('every complete pipeline shown in the page builds', async () => {
    const DOCUMENTED_KEYS = Object.fromEntries(
      ['OPENAI', 'COHERE', 'VOYAGE', 'ANTHROPIC', 'GEMINI', 'MISTRAL', 'AZURE_OPENAI'].map((service) => [`${service}_API_KEY`, `${service.toLowerCase()}-doc`]),
    );
    const { readFile } = await import('node:fs/promises');
    const page = await readFile(join(process.cwd(), 'docs', 'configuration.md'), 'utf8');
    const blocks = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]) as Record<string, unknown>);
    const pipelines = blocks.filter((block) => 'store' in block);
    expect(pipelines.length).toBeGreaterThanOrEqual(9);
    for (const pipeline of pipelines) {
      const rag = await createRag(pipeline, { baseDirectory: directory, environment: DOCUMENTED_KEYS });
      expect(rag.components().store.name).toBe('file-store');
    }
  });

  it('the priced pipeline of docs/providers.md builds, its price table checked', async () => {
    const { readFile } = await import('node:fs/promises');
    const page = await readFile(join(process.cwd(), 'docs', 'providers.md'), 'utf8');
    const priced = [...page.matchAll(/```json\n([\s\S]*?)```/g)]
      .map((match) => JSON.parse(match[1]) as Record<string, unknown>)
      .filter((block) => 'prices' in block);
    expect(priced).toHaveLength(1);
    const rag = await createRag(priced[0], { baseDirectory: directory, environment: { OPENAI_API_KEY: 'openai-doc' } });
    expect((rag as ConfiguredRAG).priceTable).toMatchObject({ currency: 'USD', asOf: '2026-06-21' });
  });
});
