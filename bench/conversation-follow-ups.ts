/**
 * Follow-up questions, searched bare, condensed offline, and as the original question (the ceiling).
 *
 *   nice npx tsx bench/conversation-follow-ups.ts [--print] [--skip-no-op]
 *
 * 1. Dialogues. From ../shared/eval/hotpotqa-500, every bridge question gives a two-turn dialogue by the rules in
 *    bench/follow-up-dialogues.ts: turn 1 asks for the bridge entity, turn 2 asks about it with a pronoun (`--print`
 *    lists them). Turn 1 is answered two ways: with the sentence of the first-hop paragraph that names the bridge
 *    entity, cited [1] (a correct answer), and by Axon itself (the embedded default with no chat model: an
 *    extractive answer from its own search).
 * 2. Retrieval. The embedded default (`EmbeddedRAG`: the local hashing embedder and the file store, hybrid search),
 *    the corpus indexed as `axon eval` does (title + text, the title kept in metadata), 100 results per search.
 *    Turn 2's gold document is the second hop (the bridge entity's paragraph); Recall@10 is the share of dialogues
 *    with it in the first 10. Three searches per dialogue: the bare follow-up, the follow-up condensed offline
 *    (`condenseQuestion`) with each history, and the original HotpotQA question (the ceiling). The share of the gap
 *    recovered is (condensed − bare) / (ceiling − bare). A fourth search, the follow-up with the bridge entity's name
 *    in place of the pronoun, shows what a perfect rewrite would reach (the original question does not name the
 *    bridge entity, so a rewrite that does can pass it).
 * 3. No-op check (unless --skip-no-op). SciFact and HotpotQA-500, every judged query asked as the first turn (no
 *    history): nDCG@10 of the query against the query condensed, and how many the condense step changed. Then the
 *    stricter case: each query asked right after the one before it in the file (that question and Axon's answer as
 *    the history), where a stand-alone question must still be left as it is.
 *
 * Reads the data from ../shared/eval and skips, with a message, when it is absent. Nothing is written anywhere but a
 * temporary folder, removed at the end.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EmbeddedRAG } from '../app/config/embedded-rag.ts';
import type { ConversationTurn } from '../src/contracts/chat-history.ts';
import { condenseQuestion } from '../src/conversation/condense.ts';
import { beirDocumentText, type BeirDataset, loadBeir } from '../src/eval/beir.ts';
import { ndcgAt } from '../src/eval/metrics.ts';
import { chunk } from '../src/runtime/concurrency.ts';
import { followUpDialogues } from './follow-up-dialogues.ts';
import { sharedEvalPath } from './helpers.ts';

const { values: flags } = parseArgs({
  options: {
    print: { type: 'boolean', default: false },
    'skip-no-op': { type: 'boolean', default: false },
  },
});
const TOP_K = 100;

async function main(): Promise<void> {
  const hotpot = sharedEvalPath('hotpotqa-500');
  if (!existsSync(hotpot)) {
    console.log(`hotpotqa-500 not found at ${hotpot}; skipping the follow-up benchmark.`);
    return;
  }
  const dataset = await loadBeir(hotpot);
  const generation = followUpDialogues(dataset);
  const { dialogues } = generation;
  console.log(
    `HotpotQA-500: ${generation.bridgeQuestions} bridge questions, ${dialogues.length} dialogues generated ` +
      `(left out: ${Object.entries(generation.leftOut)
        .map(([reason, count]) => `${count} ${reason}`)
        .join('; ')}). Node ${process.version}.`,
  );
  const index = await openIndex(dataset);
  try {
    const hits = { bare: 0, condensedCited: 0, condensedAxon: 0, ceiling: 0, resolved: 0 };
    const changed = { cited: 0, axon: 0 };
    for (const dialogue of dialogues) {
      const citedAnswer = dialogue.bridgeSentences.map((sentence) => `${sentence} [1]`).join(' ');
      const axonAnswer = (await index.rag.answer(dialogue.firstQuestion)).text;
      const cited = condenseQuestion(dialogue.followUp, [turn(dialogue.firstQuestion, citedAnswer)]);
      const axon = condenseQuestion(dialogue.followUp, [turn(dialogue.firstQuestion, axonAnswer)]);
      if (cited.method !== 'unchanged') changed.cited++;
      if (axon.method !== 'unchanged') changed.axon++;
      const found = async (text: string) => (await index.search(text)).slice(0, 10).includes(dialogue.secondHopId);
      if (await found(dialogue.followUp)) hits.bare++;
      if (await found(cited.output)) hits.condensedCited++;
      if (await found(axon.output)) hits.condensedAxon++;
      if (await found(dialogue.original)) hits.ceiling++;
      if (await found(dialogue.resolved)) hits.resolved++;
      if (flags.print) {
        console.log(
          `\n[${dialogue.queryId}] ${dialogue.original}\n  turn 1: ${dialogue.firstQuestion}\n  turn 2: ${dialogue.followUp}  (resolved: ${dialogue.resolved})`,
        );
        console.log(`  condensed (cited answer): ${cited.output}\n  condensed (Axon's answer): ${axon.output}`);
      }
    }
    const share = (count: number) => count / dialogues.length;
    const recovered = (count: number) => (hits.ceiling === hits.bare ? Number.NaN : (count - hits.bare) / (hits.ceiling - hits.bare));
    console.log("\nRecall@10 of turn 2's gold document (the second hop):");
    console.log(`  bare follow-up                               ${format(share(hits.bare))}`);
    console.log(
      `  condensed offline, turn 1 answered by citing ${format(share(hits.condensedCited))}  (${percent(recovered(hits.condensedCited))} of the gap; ${changed.cited} of ${dialogues.length} rewritten)`,
    );
    console.log(
      `  condensed offline, turn 1 answered by Axon   ${format(share(hits.condensedAxon))}  (${percent(recovered(hits.condensedAxon))} of the gap; ${changed.axon} of ${dialogues.length} rewritten)`,
    );
    console.log(`  original question (ceiling)                  ${format(share(hits.ceiling))}`);
    console.log(`  follow-up with the bridge entity named       ${format(share(hits.resolved))}  (a perfect rewrite)`);
    if (!flags['skip-no-op']) {
      await noOpCheck(dataset, index);
    }
  } finally {
    await index.close();
  }
  if (!flags['skip-no-op']) {
    const scifact = sharedEvalPath('scifact');
    if (!existsSync(scifact)) console.log(`\nscifact not found at ${scifact}; its no-op check is skipped.`);
    else {
      const scifactData = await loadBeir(scifact);
      const scifactIndex = await openIndex(scifactData);
      try {
        await noOpCheck(scifactData, scifactIndex);
      } finally {
        await scifactIndex.close();
      }
    }
  }
}

interface Index {
  rag: EmbeddedRAG;
  search(text: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The embedded default over a temporary folder, with the corpus indexed the way `axon eval` indexes it. */
async function openIndex(dataset: BeirDataset): Promise<Index> {
  const directory = await mkdtemp(join(tmpdir(), 'axon-follow-ups-'));
  // No embedding cache: it would sit beside the temporary folder, outlive it, and change the indexing time measured.
  const rag = new EmbeddedRAG({ directory, topK: TOP_K, embeddingCache: false });
  const started = performance.now();
  const documents = dataset.corpus
    .map((document) => ({ document, content: beirDocumentText(document) }))
    .filter(({ content }) => content.trim() !== '')
    .map(({ document, content }) => ({
      id: document.id,
      content,
      sourceType: 'beir',
      sourceName: dataset.name,
      metadata: document.title ? { ...document.metadata, title: document.title } : document.metadata,
    }));
  for (const batch of chunk(documents, 1000)) await rag.addDocuments(batch);
  console.log(`\n${dataset.name}: ${documents.length} documents indexed in ${Math.round(performance.now() - started)} ms.`);
  return {
    rag,
    search: async (text) => (await rag.retrieve(text, { topK: TOP_K })).documents.map((document) => document.id),
    close: async () => {
      await rag.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * nDCG@10 of every judged query against the query condensed as a first turn, and as the turn after the previous
 * query of the file (with Axon's answer to it): the condense step must leave stand-alone questions alone.
 */
async function noOpCheck(dataset: BeirDataset, index: Index): Promise<void> {
  let asked = 0;
  let first = 0;
  let afterPrevious = 0;
  let changedFirst = 0;
  let changedAfter = 0;
  const examples: string[] = [];
  let previous: ConversationTurn | undefined;
  for (const query of dataset.queries) {
    const judgments = dataset.qrels.get(query.id)!;
    const ranking = await index.search(query.text);
    asked += ndcgAt(ranking, judgments, 10);
    const alone = condenseQuestion(query.text, []);
    if (alone.output !== query.text) changedFirst++;
    first += alone.output === query.text ? ndcgAt(ranking, judgments, 10) : ndcgAt(await index.search(alone.output), judgments, 10);
    const followed = condenseQuestion(query.text, previous ? [previous] : []);
    if (followed.output !== query.text) {
      changedAfter++;
      if (examples.length < 3) examples.push(`${query.text} → ${followed.output}`);
      afterPrevious += ndcgAt(await index.search(followed.output), judgments, 10);
    } else afterPrevious += ndcgAt(ranking, judgments, 10);
    previous = turn(query.text, (await index.rag.answer(query.text)).text);
  }
  const count = dataset.queries.length;
  console.log(`\n${dataset.name}, ${count} judged queries, nDCG@10:`);
  console.log(`  as asked                                  ${format(asked / count)}`);
  console.log(`  condensed as a first turn                 ${format(first / count)}  (${changedFirst} changed; difference ${signed((first - asked) / count)})`);
  console.log(
    `  condensed after the previous query        ${format(afterPrevious / count)}  (${changedAfter} changed; difference ${signed((afterPrevious - asked) / count)})`,
  );
  for (const example of examples) console.log(`    e.g. ${example}`);
}

function turn(question: string, answer: string): ConversationTurn {
  const now = new Date().toISOString();
  return { question, searchedQuestion: question, answer, citations: [], runId: 'benchmark', askedAt: now, answeredAt: now };
}

function format(value: number): string {
  return value.toFixed(4);
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;
}

function percent(value: number): string {
  return Number.isNaN(value) ? 'n/a' : `${Math.round(value * 100)}%`;
}

await main();
