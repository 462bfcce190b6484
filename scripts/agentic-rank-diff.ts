import { withBeirIndex } from './beir-index.ts';
import { relevantIds } from '../app/cli/commands/eval-answers.ts';
import { AgenticRetriever } from '../src/agentic/agentic-retriever.ts';
import type { AgenticResult } from '../src/agentic/types.ts';

await withBeirIndex(process.argv[2], async (rag, dataset) => {
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
});
