import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRegistry } from '../../../app/config/built-ins.ts';
import { loadConfigFile } from '../../../app/config/config-file.ts';
import { createRag } from '../../../app/config/create-rag.ts';
import { defineComponent } from '../../../app/config/registry.ts';
import type { ChatProvider } from '../../../src/contracts/chat.ts';
import type { EmbeddingsProvider } from '../../../src/contracts/embeddings.ts';
import type { VectorStore } from '../../../src/contracts/vector-store.ts';
import type { Document } from '../../../src/document.ts';
import { ConfigError } from '../../../src/errors.ts';
import { ScriptedChat } from '../../helpers/scripted-chat.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-container-'));
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

/** A post-processor that keeps what it was given, to compare with the pipeline's own parts. */
function recordingProcessor(name: string, given: { chat?: ChatProvider; embeddings?: EmbeddingsProvider; store?: VectorStore }) {
  return { name, given, process: async (_question: string, documents: Document[]) => documents };
}

const memoryStore = { type: 'memory' };

describe('the container createRag resolves', () => {
  it('gives a processor the parts it declares: the pipeline’s own store and embeddings', async () => {
    const registry = createRegistry();
    registry.register(
      defineComponent({
        kind: 'post-processor',
        name: 'parent-documents',
        requires: ['store', 'embeddings'],
        options: z.object({}).strict(),
        create: (_options, { store, embeddings }) => recordingProcessor('parent-documents', { store, embeddings }),
      }),
    );
    const rag = await createRag({ store: memoryStore, postProcessors: [{ type: 'parent-documents' }] }, { registry, baseDirectory: directory });
    const parts = rag.components();
    const processor = parts.postProcessors[0] as ReturnType<typeof recordingProcessor>;
    expect(processor.given.store).toBe(parts.store);
    expect(processor.given.embeddings).toBe(parts.embeddings);
  });

  it('builds each part once, before what needs it, and shares it with every component and the RAG', async () => {
    const built: string[] = [];
    const registry = createRegistry();
    const chat = () => {
      built.push('chat');
      return new ScriptedChat(['["x"]']);
    };
    registry.register(defineComponent({ kind: 'chat', name: 'counted', options: z.object({}).strict(), create: chat }));
    registry.register(
      defineComponent({
        kind: 'store',
        name: 'embedding-aware',
        requires: ['embeddings'],
        options: z.object({}).strict(),
        create: (_options, { embeddings }) => {
          built.push(`store after ${embeddings?.name}`);
          return { name: 'embedding-aware' } as VectorStore;
        },
      }),
    );
    registry.register(
      defineComponent({
        kind: 'post-processor',
        name: 'chat-user',
        requires: ['chat'],
        options: z.object({}).strict(),
        create: (_options, { chat }) => recordingProcessor('chat-user', { chat }),
      }),
    );
    const rag = await createRag(
      {
        chat: { provider: 'counted' },
        store: memoryStore,
        preProcessors: [{ type: 'query-transformation', strategy: 'HYDE' }],
        postProcessors: [{ type: 'chat-user' }, { type: 'llm-reranker' }, { type: 'chat-user' }],
      },
      { registry, baseDirectory: directory },
    );
    expect(built).toEqual(['chat']);
    const parts = rag.components();
    expect((parts.postProcessors[0] as ReturnType<typeof recordingProcessor>).given.chat).toBe(parts.chat);
    expect((parts.postProcessors[2] as ReturnType<typeof recordingProcessor>).given.chat).toBe(parts.chat);
    expect(parts.postProcessors[0]).not.toBe(parts.postProcessors[2]);

    // A store that declares the embeddings is built after them, and given them.
    built.length = 0;
    await createRag({ store: { type: 'embedding-aware' } }, { registry, baseDirectory: directory });
    expect(built).toEqual(['store after local-hash-embeddings']);
  });

  it('builds a container per call: two pipelines from one registry share no part', async () => {
    const registry = createRegistry();
    registry.register(defineComponent({ kind: 'chat', name: 'fresh', options: z.object({}).strict(), create: () => new ScriptedChat(['x']) }));
    const config = { chat: { provider: 'fresh' }, store: memoryStore };
    const [first, second] = await Promise.all([createRag(config, { registry }), createRag(config, { registry })]);
    expect(first.components().chat).not.toBe(second.components().chat);
    expect(first.components().store).not.toBe(second.components().store);
  });

  it('gives a part declared in uses when the pipeline has it, and undefined (no problem) when it has none', async () => {
    const registry = createRegistry();
    registry.register(defineComponent({ kind: 'chat', name: 'scripted', options: z.object({}).strict(), create: () => new ScriptedChat(['x']) }));
    registry.register(
      defineComponent({
        kind: 'post-processor',
        name: 'chat-if-any',
        uses: ['chat'],
        options: z.object({}).strict(),
        create: (_options, { chat }) => recordingProcessor('chat-if-any', { chat }),
      }),
    );
    const withChat = await createRag({ chat: { provider: 'scripted' }, store: memoryStore, postProcessors: [{ type: 'chat-if-any' }] }, { registry });
    expect((withChat.components().postProcessors[0] as ReturnType<typeof recordingProcessor>).given.chat).toBe(withChat.components().chat);
    const withoutChat = await createRag({ store: memoryStore, postProcessors: [{ type: 'chat-if-any' }] }, { registry });
    expect((withoutChat.components().postProcessors[0] as ReturnType<typeof recordingProcessor>).given.chat).toBeUndefined();
  });

  it('refuses a factory that reads a part it did not declare, saying how to declare it', async () => {
    const registry = createRegistry();
    registry.register(
      defineComponent({
        kind: 'post-processor',
        name: 'undeclared',
        options: z.object({}).strict(),
        create: (_options, { store }) => recordingProcessor('undeclared', { store }),
      }),
    );
    const issues = await issuesOf(() => createRag({ store: memoryStore, postProcessors: [{ type: 'undeclared' }] }, { registry }));
    expect(issues).toEqual([
      {
        path: 'postProcessors[0].type',
        code: 'plugin_invalid',
        message: `the post-processor "undeclared" reads the pipeline's store without declaring it: add requires: ['store'] to its definition`,
      },
    ]);
  });

  it('reports parts that need each other before building any', async () => {
    const built: string[] = [];
    const registry = createRegistry();
    registry.register(
      defineComponent({
        kind: 'embeddings',
        name: 'store-backed',
        requires: ['store'],
        options: z.object({}).strict(),
        create: () => {
          built.push('embeddings');
          return {} as EmbeddingsProvider;
        },
      }),
    );
    registry.register(
      defineComponent({
        kind: 'store',
        name: 'embedding-aware',
        requires: ['embeddings'],
        options: z.object({}).strict(),
        create: () => {
          built.push('store');
          return {} as VectorStore;
        },
      }),
    );
    const issues = await issuesOf(() => createRag({ embeddings: { provider: 'store-backed' }, store: { type: 'embedding-aware' } }, { registry }));
    expect(issues).toEqual([
      {
        path: 'embeddings.provider',
        code: 'dependency_cycle',
        message: 'the parts need each other, so none can be built first: embeddings → store → embeddings',
      },
    ]);
    expect(built).toEqual([]);
  });

  it('refuses a definition that declares a part that does not exist', () => {
    const registry = createRegistry();
    expect(() =>
      registry.register({
        kind: 'post-processor',
        name: 'needs-cache',
        requires: ['cache' as 'store'],
        options: z.object({}),
        create: () => recordingProcessor('needs-cache', {}),
      }),
    ).toThrow(/declares an unknown part "cache"/);
  });

  it('lets a plugin module replace a built-in by name, and builds the replacement with the parts it declares', async () => {
    await writeFile(
      join(directory, 'plugins.ts'),
      `import { z } from 'zod';
export function register(registry) {
  registry.register({
    kind: 'post-processor',
    name: 'top-n',
    requires: ['store'],
    options: z.object({ n: z.number() }).strict(),
    create: ({ n }, { store }) => ({ name: 'store-aware-top-n', store, process: async (_question, documents) => documents.slice(0, n) }),
  }, { replace: true });
}
`,
    );
    await writeFile(
      join(directory, 'axon.config.json'),
      JSON.stringify({ plugins: ['./plugins.ts'], store: memoryStore, postProcessors: [{ type: 'top-n', n: 1 }] }),
    );
    const loaded = await loadConfigFile(join(directory, 'axon.config.json'));
    const rag = await createRag(loaded.config, { registry: loaded.registry, baseDirectory: loaded.baseDirectory });
    const [processor] = rag.components().postProcessors as unknown as Array<{ name: string; store: VectorStore }>;
    expect(processor.name).toBe('store-aware-top-n');
    expect(processor.store).toBe(rag.components().store);
  });
});
