import { describe, expect, it } from 'vitest';
import { AgenticRetriever, type AgenticResult, type AgenticTraceEvent } from '../../src/agentic/index.ts';
import { ResultSet } from '../../src/agentic/result-set.ts';
import type { Document, DocumentInput } from '../../src/document.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';
import { callKind, collect, corpusRag, json } from './fixtures.ts';

/** Twelve notes the question finds, best first by how often they name it, and three only a round finds. */
function lanternCorpus(): DocumentInput[] {
  const lanterns = Array.from({ length: 12 }, (_, index) => ({
    id: `lantern-${index}`,
    content: `Note ${index}: ${'lantern '.repeat(12 - index)}kept in the shed.`,
    sourceType: 'note',
    sourceName: `lantern-${index}`,
  }));
  const kestrels = Array.from({ length: 3 }, (_, index) => ({
    id: `kestrel-${index}`,
    content: `Field report ${index}: a kestrel nests above the barn.`,
    sourceType: 'note',
    sourceName: `kestrel-${index}`,
  }));
  return [...lanterns, ...kestrels];
}

/** A model that plans one round searching "kestrel", finds it sufficient, and answers citing result 1. */
function oneRoundChat(answerPrompts: string[]): ScriptedChat {
  return new ScriptedChat((call) => {
    const kind = callKind(call);
    if (kind === 'plan') return json({ subQueries: [{ query: 'kestrel', retriever: 'notes' }] });
    if (kind === 'sufficiency') return json({ sufficient: true, missing: '' });
    if (kind === 'answer') {
      answerPrompts.push(call.messages.map((message) => message.content).join('\n'));
      return 'The lantern is in the shed [1].';
    }
    throw new Error(`unexpected ${kind} call`);
  });
}

const QUESTION = 'Where is the lantern?';

describe('AgenticRetriever: the question own search below the ranked results', () => {
  it('lists the rest of the question own search, in its order, after the ranked results, which stay as they were', async () => {
    const rag = await corpusRag(lanternCorpus());
    const retrievers = [{ name: 'notes', description: 'Notes', rag, maxResults: 3 }];
    const ranked = await new AgenticRetriever({ retrievers, chat: oneRoundChat([]), maxResults: 5 }).run(QUESTION);
    const listed = await new AgenticRetriever({ retrievers, chat: oneRoundChat([]), maxResults: 5, topK: 10 }).run(QUESTION);
    const onePass = (await rag.retrieve(QUESTION, { topK: 10 })).documents.map((document) => document.id);
    const ids = (result: AgenticResult) => result.results.map((item) => item.id);

    // The round's results are among the ranked ones, so the head is not the single search's.
    expect(ids(ranked)).toHaveLength(5);
    expect(ids(ranked).some((id) => id.startsWith('kestrel'))).toBe(true);
    // The head is unchanged; below it, what the single search found and the head lacks, in its order, to 10 in all.
    expect(ids(listed).slice(0, 5)).toEqual(ids(ranked));
    expect(ids(listed)).toHaveLength(10);
    expect(ids(listed).slice(5)).toEqual(onePass.filter((id) => !ids(ranked).includes(id)).slice(0, 5));
    expect(new Set(ids(listed)).size).toBe(10);
    // A result that only follows was ranked by no fusion, and says which search found it where.
    const follower = listed.results[5];
    expect(follower.score).toBe(0);
    expect(follower.provenance).toEqual([
      { step: 'speculativeRetrieval', iteration: 0, query: QUESTION, retriever: 'notes', rank: onePass.indexOf(follower.id) + 1 },
    ]);
  });

  it('shows the planner and the answer only the ranked results, and the speculative step says how many follow', async () => {
    const rag = await corpusRag(lanternCorpus());
    const prompts: string[] = [];
    const agent = new AgenticRetriever({
      retrievers: [{ name: 'notes', description: 'Notes', rag, maxResults: 3 }],
      chat: oneRoundChat(prompts),
      maxResults: 5,
      topK: 10,
    });
    const { events, result } = await collect(agent.stream(QUESTION));
    const closed = events.filter((event): event is AgenticTraceEvent => event.type === 'trace' && event.status !== 'inProgress');
    const speculative = closed.find((event) => event.step === 'speculativeRetrieval')!;
    expect(speculative.output?.searches).toEqual([expect.objectContaining({ retriever: 'notes', found: 3, following: 7, new: 3 })]);
    for (const step of closed.filter((event) => event.step === 'planning' || event.step === 'sufficiency')) expect(step.input.results).toBeLessThanOrEqual(5);
    expect(prompts).toHaveLength(1);
    expect([...prompts[0].matchAll(/<evidence label="(\d+)"/g)].map((match) => Number(match[1]))).toEqual([1, 2, 3, 4, 5]);
    expect(result.results).toHaveLength(10);
    expect(result.citations.flatMap((citation) => citation.references.map((reference) => reference.resultIndex))).toEqual([0]);
  });

  it('changes nothing without topK: the run lists its ranked results only, from searches of maxResults', async () => {
    const rag = await corpusRag(lanternCorpus());
    const result = await new AgenticRetriever({
      retrievers: [{ name: 'notes', description: 'Notes', rag, maxResults: 3 }],
      chat: oneRoundChat([]),
      maxResults: 10,
    }).run(QUESTION);
    // Three from the question's search, three from the round: nothing follows.
    expect(result.results.map((item) => item.id).sort()).toEqual(
      ['kestrel-0', 'kestrel-1', 'kestrel-2', ...(await rag.retrieve(QUESTION, { topK: 3 })).documents.map((document) => document.id)].sort(),
    );
  });
});

describe('ResultSet: what follows the ranked results', () => {
  const document = (id: string, content = `Text of ${id}.`): Document => ({ id, content, sourceType: 'note', sourceName: id, score: 0, metadata: {} });
  const origin = (retriever: string) => ({ step: 'speculativeRetrieval' as const, iteration: 0, query: 'q', retriever });

  it('lists a result once: one ranked, one of the same content, or one found twice is not repeated below', () => {
    const results = new ResultSet(2, 6);
    const searched = [document('a'), document('b'), document('c'), document('copy-of-a', 'Text of a.'), document('d'), document('e')];
    results.collect(searched.slice(0, 2), origin('one'), 0, 1);
    results.follow(searched, origin('one'), 0, 0);
    expect(results.ranked().map((item) => item.id)).toEqual(['a', 'b']);
    expect(results.listed().map((item) => item.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('keeps the fused score of a result a round found but did not rank in the head', () => {
    const results = new ResultSet(2, 4);
    results.collect([document('a'), document('b')], origin('one'), 0, 1);
    results.collect([document('x'), document('c')], { step: 'retrieval', iteration: 1, query: 'sub', retriever: 'one' }, 0, 0.25);
    results.follow([document('a'), document('b'), document('c'), document('d')], origin('one'), 0, 0);
    const listed = results.listed();
    expect(listed.map((item) => item.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(listed[2].score).toBeCloseTo(0.25 / 62, 6);
    expect(listed[2].provenance.map((provenance) => provenance.step)).toEqual(['retrieval']);
    expect(listed[3].score).toBe(0);
  });

  it('takes the question own searches of several retrievers in turn, by rank, and stops at its length', () => {
    const results = new ResultSet(1, 5);
    results.collect([document('a1')], origin('one'), 0, 1);
    results.follow([document('b1'), document('b2'), document('b3')], origin('two'), 1, 1);
    results.follow([document('a1'), document('a2'), document('a3')], origin('one'), 0, 0);
    expect(results.listed().map((item) => item.id)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
  });
});
