/**
 * A quick loop for the rule behind the answer's status (`src/answer/coverage.ts`): retrieve the evidence of every
 * judged query of a BEIR set once, with the index as is and with the query's judged-relevant documents left out
 * (as `axon eval --answers` does, one pass, embedded default), save it, then re-run only the extractive answer over
 * the saved evidence, so a change to coverage is measured on both errors in seconds instead of a full eval.
 *
 *   npx tsx scripts/answer-coverage-loop.ts dump ../shared/eval/scifact /tmp/scifact-evidence.json
 *   npx tsx scripts/answer-coverage-loop.ts score /tmp/scifact-evidence.json [--list]
 *
 * `score` prints the shares answered with and without the relevant documents and, with `--list`, every question
 * refused with its relevant documents present, with the key terms and words the quoted sentences did not cover.
 * The figures match `axon eval --answers`'s one-pass row as long as retrieval is unchanged (the dump holds the
 * evidence after the context budget, as the answer step sees it).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { withBeirIndex } from './beir-index.ts';
import { relevantIds, withoutDocuments } from '../app/cli/commands/eval-answers.ts';
import { extractiveAnswer } from '../src/answer/extractive.ts';
import type { Evidence } from '../src/context/evidence.ts';
import { containsGold, goldAnswers, isYesNo } from '../src/eval/answers.ts';

interface SavedQuery {
  id: string;
  text: string;
  golds: string[];
  relevant: string[];
  status: string;
  statusWithoutGold: string;
  withGold: Evidence[];
  withoutGold: Evidence[];
}

async function dump(folder: string, output: string): Promise<void> {
  await withBeirIndex(folder, async (rag, dataset) => {
    const saved: SavedQuery[] = [];
    for (const query of dataset.queries) {
      const relevant = relevantIds(dataset, query.id);
      if (relevant.length === 0) continue;
      const withGold = await rag.answer(query.text, { topK: 100 });
      const withoutGold = await rag.answer(query.text, { topK: 100, filter: withoutDocuments(relevant) });
      // The answer's documents are its evidence, labelled from 1 in order.
      const strip = (documents: readonly { id: string; content: string; metadata: Record<string, unknown> }[]) =>
        documents.map(({ id, content, metadata }, index) => ({ label: index + 1, document: { id, content, metadata } }) as Evidence);
      saved.push({
        id: query.id,
        text: query.text,
        golds: goldAnswers(query),
        relevant,
        status: withGold.status,
        statusWithoutGold: withoutGold.status,
        withGold: strip(withGold.documents),
        withoutGold: strip(withoutGold.documents),
      });
      if (saved.length % 50 === 0) process.stderr.write(`${saved.length} queries\n`);
    }
    await writeFile(output, JSON.stringify(saved));
  });
}

async function score(input: string, list: boolean): Promise<void> {
  const saved = JSON.parse(await readFile(input, 'utf8')) as SavedQuery[];
  let answered = 0;
  let answeredWithoutGold = 0;
  let goldQuestions = 0;
  let goldFound = 0;
  const refused: string[] = [];
  let answerMs = 0;
  for (const query of saved) {
    const started = performance.now();
    const withGold = extractiveAnswer(query.text, query.withGold);
    const withoutGold = extractiveAnswer(query.text, query.withoutGold);
    answerMs += performance.now() - started;
    const isAnswered = withGold.text !== '' && withGold.coverage.sufficient;
    if (isAnswered) answered++;
    else
      refused.push(
        `${query.id}\t${query.text}\n\tmissing keys: ${withGold.coverage.missingKeys.join(', ')}; missing: ${withGold.coverage.missing.join(', ')}; share ${withGold.coverage.share}`,
      );
    if (withoutGold.text !== '' && withoutGold.coverage.sufficient) answeredWithoutGold++;
    if (query.golds.length > 0 && !isYesNo(query.golds)) {
      goldQuestions++;
      if (isAnswered && query.golds.some((gold) => containsGold(withGold.text, gold))) goldFound++;
    }
  }
  const share = (count: number, total: number) => (total === 0 ? '-' : (count / total).toFixed(4));
  console.log(
    `${input}: ${saved.length} queries; answered ${share(answered, saved.length)}, without gold ${share(answeredWithoutGold, saved.length)}, gold in answer ${share(goldFound, goldQuestions)} (${goldQuestions}); ${(answerMs / (2 * saved.length)).toFixed(1)} ms an answer`,
  );
  if (list) console.log(refused.join('\n'));
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'dump') await dump(rest[0], rest[1]);
else if (command === 'score') for (const file of rest.filter((argument) => !argument.startsWith('--'))) await score(file, rest.includes('--list'));
else {
  console.error('usage: answer-coverage-loop.ts dump <beir-folder> <out.json> | score <dump.json>... [--list]');
  process.exitCode = 2;
}
