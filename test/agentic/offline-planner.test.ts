import { describe, expect, it } from 'vitest';
import { AgenticRetriever } from '../../src/agentic/index.ts';
import { OfflinePlanner } from '../../src/agentic/offline-planner.ts';
import type { AgenticResultItem } from '../../src/agentic/types.ts';
import { corpusRag, KISS_AND_TELL, twoHopCorpus } from './fixtures.ts';

const item = (content: string, metadata: AgenticResultItem['metadata'] = {}): AgenticResultItem => ({
  id: content.slice(0, 8),
  content,
  metadata,
  sourceType: 'wiki',
  sourceName: '',
  retriever: 'wiki',
  score: 1,
  expanded: false,
  provenance: [],
});

const state = (results: AgenticResultItem[], missing?: string) => ({
  question: KISS_AND_TELL,
  iteration: 1,
  results,
  missing,
  previousQueries: [],
  retrievers: [{ name: 'wiki', description: 'Encyclopedia' }],
  maxSubQueries: 5,
  signal: new AbortController().signal,
});

describe('OfflinePlanner', () => {
  it('builds second-hop queries from the bridge entity a result names and the question terms it does not cover', async () => {
    const decision = await new OfflinePlanner().plan(
      state([
        item('Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.', {
          title: 'Kiss and Tell (1945 film)',
        }),
      ]),
    );
    expect(decision.ok).toBe(true);
    // The title is mostly the question's own words (the first hop), so the bridge is the name in the text.
    expect(decision.ok && decision.value.subQueries).toEqual([{ query: 'Shirley Temple government position held actress played', retriever: 'wiki' }]);
  });

  it('judges sufficiency by how much of the question the best results cover, and names what is missing', async () => {
    const planner = new OfflinePlanner();
    const thin = await planner.judge(state([item('Kiss and Tell is a 1945 film with Corliss Archer.')]));
    expect(thin.ok && thin.value).toEqual({ sufficient: false, missing: 'government position held actress played' });
    const covered = await planner.judge(
      state([
        item('Kiss and Tell is a 1945 film in which the actress Shirley Temple played Corliss Archer.'),
        item('She held the government position of Chief of Protocol.'),
      ]),
    );
    expect(covered.ok && covered.value.sufficient).toBe(true);
  });

  it('finds both hops of a two-hop question that one pass misses, with the same events and stop reasons', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const onePass = (await rag.retrieve(KISS_AND_TELL)).documents.slice(0, 5).map((document) => document.id);
    expect(onePass).toContain('film');
    expect(onePass).not.toContain('temple');

    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia', rag, maxResults: 3 }], maxResults: 5 });
    const steps: string[] = [];
    for await (const event of agent.stream(KISS_AND_TELL)) {
      if (event.type === 'trace' && event.status !== 'inProgress') steps.push(event.step);
      if (event.type === 'result') {
        const ids = event.result.results.map((result) => result.id);
        expect(ids).toContain('film');
        expect(ids).toContain('temple');
        expect(event.result.planner).toBe('offline');
        expect(event.result.stopReason).toBe('sufficient');
        expect(event.result.usage.modelCalls).toBe(0);
        const temple = event.result.results.find((result) => result.id === 'temple')!;
        expect(temple.provenance[0]).toMatchObject({ step: 'retrieval', iteration: 1, query: expect.stringContaining('Shirley Temple') });
      }
    }
    expect(steps.slice(0, 2)).toEqual(['speculativeRetrieval', 'planning']);
    expect(steps).toContain('sufficiency');
  });
});
