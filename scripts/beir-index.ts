/**
 * What the evaluation scripts share: a BEIR set indexed once into a temporary file store, through the registry
 * like any configured store (the embedded default otherwise), as `axon eval` indexes it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createRegistry } from '../app/config/built-ins.ts';
import { createRag } from '../app/config/create-rag.ts';
import { defineComponent } from '../app/config/registry.ts';
import type { VectorStore } from '../src/contracts/vector-store.ts';
import type { RAG } from '../src/rag.ts';
import { beirDocuments, loadBeir, type BeirDataset } from '../src/eval/beir.ts';

/** Load the test split of the BEIR folder, index its corpus, run `use`, then remove the store. */
export async function withBeirIndex<T>(folder: string, use: (rag: RAG, dataset: BeirDataset) => Promise<T>): Promise<T> {
  const dataset = await loadBeir(resolve(folder), { split: 'test' });
  const directory = await mkdtemp(join(tmpdir(), 'axon-beir-index-'));
  let store: VectorStore | undefined;
  try {
    const registry = createRegistry();
    const definition = (await registry.get('store', 'file'))!;
    store = await definition.create(definition.options.parse({ directory, topK: 100 }), {
      chat: undefined,
      embeddings: undefined,
      store: undefined,
      baseDirectory: directory,
    });
    const created = store;
    registry.register(defineComponent({ kind: 'store', name: 'beir-index', options: z.object({}).loose(), create: () => created }), { replace: true });
    const rag = await createRag({ store: { type: 'beir-index' } }, { registry, baseDirectory: directory });
    const { documents } = beirDocuments(dataset);
    for (let start = 0; start < documents.length; start += 1000) await rag.addDocuments(documents.slice(start, start + 1000));
    return await use(rag, dataset);
  } finally {
    await store?.close?.();
    await rm(directory, { recursive: true, force: true });
  }
}
