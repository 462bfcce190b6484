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
  it('builds second-hop queries from the name a result mentions and the question words it does not cover, following that result', async () => {
    const decision = await new OfflinePlanner().plan(
      state([
        item('Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.', {
          title: 'Kiss and Tell (1945 film)',
        }),
      ]),
    );
    expect(decision.ok).toBe(true);
    // The title is mostly the question's own words (the first hop), so the bridge is the name in the text.
    expect(decision.ok && decision.value.subQueries).toEqual([
      { query: 'Shirley Temple government position held actress played', retriever: 'wiki', follows: 1 },
    ]);
  });

  it('plans from names only: never from a sentence-initial ordinary word, boilerplate or a bare verb', async () => {
    const question = 'Who wrote adduser?';
    const copyright = item(
      'Files: *\nCopyright: 1996-1999 Guy Maor <maor@debian.org>\nLicense: GPL-2+\n\nWork on adduser began in 1994. Limitation of Liability. Permission is hereby granted.',
    );
    const decision = await new OfflinePlanner().plan({ ...state([copyright], 'wrote'), question });
    expect(decision.ok && decision.value.subQueries).toEqual([{ query: 'Guy Maor wrote', retriever: 'wiki', follows: 1 }]);
    // A result naming nothing plans nothing: no sub-query of leftover words.
    const nameless = await new OfflinePlanner().plan({ ...state([item('adduser adds a user to the system.')], 'wrote'), question });
    expect(nameless.ok && nameless.value.subQueries).toEqual([]);
    // A heading as title is no name either: documentation chunks titled "Differences" or "The `axon` command".
    for (const title of ['Differences', 'Search: the tokenizer', 'The `axon` command']) {
      const headed = item('The differences between agentic retrieval and the command are small.', { title });
      const planned = await new OfflinePlanner().plan({ ...state([headed], 'wrote'), question });
      expect(planned.ok && planned.value.subQueries).toEqual([]);
    }
  });

  it('bridges to a name that shares only a common noun with the question, never to a name the question writes out', async () => {
    // "a university" is a common noun in the question: Veldon University is another entity, the one asked for.
    const question = 'Mara Quell taught chemistry at a university located in which city?';
    const page = item('Mara Quell (born 3 February 1950) is a chemist. Mara Quell taught at Veldon University for thirty years.', { title: 'Mara Quell' });
    const decision = await new OfflinePlanner().plan({ ...state([page]), question });
    expect(decision.ok && decision.value.subQueries.map((subQuery) => subQuery.query)).toEqual([expect.stringMatching(/^Veldon University /)]);
    // A question written in lower case says nothing by its capitals: every word of it counts, so "Mara Quell" is
    // still the first hop (and "Veldon University", sharing "university", is taken for one as well).
    const lower = await new OfflinePlanner().plan({ ...state([page]), question: question.toLowerCase() });
    expect(lower.ok && lower.value.subQueries.map((subQuery) => subQuery.query)).toEqual([expect.not.stringMatching(/^(Mara Quell|Veldon University)/)]);
    // A title the question writes out whole, its lower-case words included, is the first hop too.
    const opera = item('Le roi malgré lui is an opéra comique by Emmanuel Chabrier.', { title: 'Le roi malgré lui' });
    const operas = await new OfflinePlanner().plan({
      ...state([opera]),
      question: 'Do the operas Vanessa and Le roi malgré lui have the same number of acts?',
    });
    expect(operas.ok && operas.value.subQueries.map((subQuery) => subQuery.query)).toEqual([expect.stringMatching(/^Emmanuel Chabrier/)]);
  });

  it('reads a common word opening the question as that word, not a name, when the question or its results write it in lower case', async () => {
    const page = item('Mara Quell (born 3 February 1950) is a chemist. Mara Quell taught at Veldon University for thirty years.', { title: 'Mara Quell' });
    const other = item('Veldon is a city whose university was founded in 1820.');
    const question = 'University where Mara Quell taught: in which city is it?';
    const decision = await new OfflinePlanner().plan({ ...state([page, other]), question });
    // The first result's bridge is the university it names (the second result's, "Veldon", is its own).
    expect(decision.ok && decision.value.subQueries[0]).toMatchObject({ query: expect.stringMatching(/^Veldon University /), follows: 1 });
    // An opening word with an accent is compared as the results write it, accents and all.
    const accented = await new OfflinePlanner().plan({
      ...state([
        item('Mara Quell (born 3 February 1950) is a chemist. Mara Quell taught at Veldon Université for thirty years.', { title: 'Mara Quell' }),
        item('Veldon is a city whose université was founded in 1820.'),
      ]),
      question: 'Université where Mara Quell taught: in which city is it?',
    });
    expect(accented.ok && accented.value.subQueries[0]).toMatchObject({ query: expect.stringMatching(/^Veldon Université /), follows: 1 });
    // Without a lower-case "university" anywhere, the opening capital is all there is to go by: it is read as named.
    const alone = await new OfflinePlanner().plan({ ...state([page]), question });
    expect(alone.ok && alone.value.subQueries.map((subQuery) => subQuery.query)).not.toContainEqual(expect.stringMatching(/^Veldon University/));
  });

  it('writes the question words of a sub-query as the question writes them, diacritics and sound marks kept', async () => {
    const page = item('Mara Quell (born 1950) is a chemist. Mara Quell taught at Veldon University for thirty years.', { title: 'Mara Quell' });
    const decision = await new OfflinePlanner().plan({ ...state([page]), question: 'Which café near the university where Mara Quell taught opened first?' });
    expect(decision.ok && decision.value.subQueries.map((subQuery) => subQuery.query)).toEqual([expect.stringMatching(/^Veldon University (.* )?café( |$)/)]);
    const japanese = item('Mara Quell taught at Veldon University.', { title: 'Mara Quell' });
    const asked = await new OfflinePlanner().plan({ ...state([japanese]), question: 'Mara Quell はどの大学で教えましたか' });
    const query = asked.ok ? asked.value.subQueries.map((subQuery) => subQuery.query).join(' ') : '';
    expect(query).toContain('どの大学で');
    expect(query).not.toContain('との大学て');
    // As written, case included: lower-casing "İstanbul" would add a combining dot ("i̇stanbul") no one wrote.
    const istanbul = await new OfflinePlanner().plan({
      ...state([page]),
      question: 'Which İstanbul café near the university where Mara Quell taught opened first?',
    });
    const istanbulQuery = istanbul.ok ? istanbul.value.subQueries.map((subQuery) => subQuery.query).join(' ') : '';
    expect(istanbulQuery).toContain('İstanbul');
    expect(istanbulQuery).not.toContain('i\u0307');
  });

  it('plans no second hop when the best results name none of what the question is about', async () => {
    const decision = await new OfflinePlanner().plan({
      ...state([item('The Escherichia coli heat shock response is well studied by Jane Doe.')]),
      question: 'Ethanol stress decreases the expression of IBP in bacteria.',
    });
    expect(decision.ok && decision.value.subQueries).toEqual([]);
    expect(decision.warnings).toEqual(['No second hop planned: the best results do not mention "IBP".']);
  });

  it('judges sufficiency by how the quoted sentences, hops chained, cover the question, and names what is missing', async () => {
    const planner = new OfflinePlanner();
    const thin = await planner.judge({ ...state([item('Kiss and Tell is a 1945 film with Corliss Archer.')]), iteration: 0 });
    expect(thin.ok && thin.value).toEqual({ sufficient: false, missing: 'government position held actress played' });
    expect(thin.warnings[0]).toMatch(/^The evidence does not mention "government", "position"/);
    const hops = [
      item('Kiss and Tell is a 1945 film in which the actress Shirley Temple played Corliss Archer.'),
      item('Shirley Temple held the government position of Chief of Protocol.'),
    ];
    const covered = await planner.judge({ ...state(hops), iteration: 1 });
    expect(covered.ok && covered.value.sufficient).toBe(true);
    // Before any round (iteration 0) the bar to skip planning is higher: 90% of the question, not 40%.
    const partly = [item('Kiss and Tell is a 1945 film in which the actress Shirley Temple played Corliss Archer.')];
    const afterRound = await planner.judge({ ...state(partly), iteration: 1 });
    const beforeRound = await planner.judge({ ...state(partly), iteration: 0 });
    expect(afterRound.ok && afterRound.value.sufficient).toBe(true);
    expect(beforeRound.ok && beforeRound.value.sufficient).toBe(false);
  });

  it('ranks the second hop directly below the result it follows from, which one pass misses', async () => {
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
        expect(ids[ids.indexOf('film') + 1]).toBe('temple');
        expect(event.result.planner).toBe('offline');
        expect(event.result.stopReason).toBe('sufficient');
        expect(event.result.usage.modelCalls).toBe(0);
        const temple = event.result.results.find((result) => result.id === 'temple')!;
        expect(temple.provenance[0]).toMatchObject({ step: 'retrieval', iteration: 1, query: expect.stringContaining('Shirley Temple') });
      }
    }
    // The speculative results are judged first (no model call); only then is a round planned.
    expect(steps.slice(0, 3)).toEqual(['speculativeRetrieval', 'sufficiency', 'planning']);
  });

  it('plans no round when the question’s own search already covers it', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia', rag, maxResults: 3 }], maxResults: 5 });
    const result = await agent.run('What government position is the Chief of Protocol in the State Department?');
    expect(result).toMatchObject({ stopReason: 'sufficient', iterations: 0, subQueries: 0, searches: 1 });
    expect(result.results.map((entry) => entry.id)).toEqual(
      (await rag.retrieve('What government position is the Chief of Protocol in the State Department?')).documents.slice(0, 3).map((document) => document.id),
    );
  });
});
