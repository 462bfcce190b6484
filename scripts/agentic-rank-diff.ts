/**
 * Which queries the agentic retriever ranks worse than one pass, and why: indexes a BEIR set as `axon eval` does
 * (embedded default), runs each judged query once in one pass and once through the agentic retriever as `axon eval
 * --agentic` runs it (10 results a search, 20 ranked, 100 listed), and prints every query whose first relevant
 * result moves, with its reciprocal rank both ways, the sub-queries planned and how the run stopped.
 *
 *   npx tsx scripts/agentic-rank-diff.ts ../shared/eval/scifact
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createRegistry } from '../app/config/built-ins.ts';
import { createRag } from '../app/config/create-rag.ts';
import { defineComponent } from '../app/config/registry.ts';
import { relevantIds } from '../app/cli/commands/eval-answers.ts';
import { AgenticRetriever } from '../src/agentic/agentic-retriever.ts';
import type { AgenticResult } from '../src/agentic/types.ts';
import type { DocumentInput } from '../src/document.ts';
import { beirDocumentText, loadBeir } from '../src/eval/beir.ts';

const folder = process.argv[2];
const dataset = await loadBeir(resolve(folder), { split: 'test' });
const directory = await mkdtemp(join(tmpdir(), 'axon-rank-diff-'));
try {
  const registry = createRegistry();
  const definition = (await registry.get('store', 'file'))!;
  const store = await definition.create(definition.options.parse({ directory, topK: 100 }), {
    chat: undefined,
    embeddings: undefined,
    store: undefined,
    baseDirectory: directory,
  });
  registry.register(defineComponent({ kind: 'store', name: 'diff-store', options: z.object({}).loose(), create: () => store }), { replace: true });
  const rag = await createRag({ store: { type: 'diff-store' } }, { registry, baseDirectory: directory });
  const documents: DocumentInput[] = [];
  for (const document of dataset.corpus) {
    const content = beirDocumentText(document);
    if (content.trim() === '') continue;
    const metadata = document.title ? { ...document.metadata, title: document.title } : document.metadata;
    documents.push({ id: document.id, content, sourceType: 'beir', sourceName: dataset.name, metadata });
  }
  for (let start = 0; start < documents.length; start += 1000) await rag.addDocuments(documents.slice(start, start + 1000));
  let mode: Awaited<ReturnType<typeof rag.retrieve>>['searchMode'] | undefined;
  const agent = () =>
    new AgenticRetriever({
      retrievers: [{ name: 'corpus', description: `Passages of ${dataset.name}`, rag, retrieve: { searchMode: mode }, maxResults: 10 }],
      generateResponse: false,
      maxResults: 20,
      topK: 100,
    });
  const reciprocal = (ranking: readonly string[], relevant: Set<string>) => {
    const index = ranking.slice(0, 10).findIndex((id) => relevant.has(id));
    return index < 0 ? 0 : 1 / (index + 1);
  };
  let onePassTotal = 0;
  let agenticTotal = 0;
  let count = 0;
  for (const query of dataset.queries) {
    const relevant = new Set(relevantIds(dataset, query.id));
    if (relevant.size === 0) continue;
    const single = await rag.retrieve(query.text, { topK: 100 });
    mode = single.searchMode;
    const onePass = single.documents.map((document) => document.id);
    const planned: string[] = [];
    let run: AgenticResult | undefined;
    for await (const event of agent().stream(query.text)) {
      if (event.type === 'trace' && event.step === 'planning' && event.output?.subQueries) planned.push(JSON.stringify(event.output.subQueries));
      if (event.type === 'result') run = event.result;
    }
    if (run === undefined) throw new Error(`No result for query ${query.id}.`);
    const agentic = run.results.filter((item) => !item.expanded).map((item) => item.id);
    const before = reciprocal(onePass, relevant);
    const after = reciprocal(agentic, relevant);
    onePassTotal += before;
    agenticTotal += after;
    count++;
    if (before !== after) {
      console.log(
        `${query.id}\t${before.toFixed(3)} → ${after.toFixed(3)}\t${run.stopReason}\t${query.text.slice(0, 90)}\n\tone pass: ${onePass.slice(0, 5).join(' ')}\n\tagentic:  ${agentic.slice(0, 5).join(' ')}\n\trelevant: ${[...relevant].join(' ')}\tplanned: ${planned.join(' ')}`,
      );
    }
  }
  console.log(`MRR@10 one pass ${(onePassTotal / count).toFixed(4)}, agentic ${(agenticTotal / count).toFixed(4)} over ${count} queries`);
  await (store as { close?: () => Promise<void> }).close?.();
} finally {
  await rm(directory, { recursive: true, force: true });
}
