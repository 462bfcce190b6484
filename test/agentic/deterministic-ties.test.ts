import { describe, expect, it } from 'vitest';
import { AgenticRetriever } from '../../src/agentic/agentic-retriever.ts';
import { endsInOrder, type TaskEvent } from '../../src/agentic/event-stream.ts';
import type { DocumentInput } from '../../src/document.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';
import { CorpusRAG, callKind, json } from './fixtures.ts';

/** A pipeline whose searches take as long as `delays` says for their query, so they can finish in either order. */
class SlowRAG extends CorpusRAG {
  readonly delays = new Map<string, number>();
  /** Queries whose search fails once its delay is over. */
  readonly failing = new Set<string>();
  override async retrieve(...[question, options]: Parameters<CorpusRAG['retrieve']>): ReturnType<CorpusRAG['retrieve']> {
    await new Promise((resolve) => setTimeout(resolve, this.delays.get(question) ?? 0));
    if (this.failing.has(question)) throw new Error(`the ${question} index is offline`);
    return super.retrieve(question, options);
  }
}

const corpus: DocumentInput[] = [
  { id: 'giraffe', content: 'Giraffe necks are long.', sourceType: 'note', sourceName: 'giraffe' },
  { id: 'zebra', content: 'Zebra stripes confuse flies.', sourceType: 'note', sourceName: 'zebra' },
  { id: 'okapi', content: 'Okapi legs have stripes too.', sourceType: 'note', sourceName: 'okapi' },
];

/** Plans the two sub-queries once, then finds the results sufficient. */
function planner(): ScriptedChat {
  return new ScriptedChat((call) => {
    const kind = callKind(call);
    if (kind === 'plan')
      return json({
        subQueries: [
          { query: 'zebra', retriever: 'notes' },
          { query: 'okapi', retriever: 'notes' },
        ],
      });
    if (kind === 'sufficiency') return json({ sufficient: true, missing: '' });
    throw new Error(`unexpected ${kind} call`);
  });
}

describe('AgenticRetriever: ties are broken the same way every run', () => {
  it('fuses the searches of a round in sub-query order, whichever finishes first', async () => {
    const rankings: string[][] = [];
    for (const slow of ['zebra', 'okapi']) {
      const rag = new SlowRAG();
      await rag.addDocuments(corpus);
      rag.delays.set(slow, 40);
      const agent = new AgenticRetriever({ retrievers: [{ name: 'notes', description: 'Notes', rag }], chat: planner(), generateResponse: false });
      const result = await agent.run('giraffe necks');
      rankings.push(result.results.map((item) => item.id));
    }
    // Each sub-query finds one note at rank 1 with the same weight: a tie, which goes to the first sub-query.
    expect(rankings[0]).toEqual(['giraffe', 'zebra', 'okapi']);
    expect(rankings[1]).toEqual(rankings[0]);
  });

  it('holds each end until every task before it has ended, starts as they happen', async () => {
    async function* events(): AsyncGenerator<TaskEvent<string>> {
      yield { phase: 'start', index: 0, at: 1 };
      yield { phase: 'start', index: 1, at: 2 };
      yield { phase: 'end', index: 1, value: 'second', at: 3 };
      yield { phase: 'start', index: 2, at: 4 };
      yield { phase: 'fail', index: 0, error: new Error('first'), at: 5 };
      yield { phase: 'end', index: 2, value: 'third', at: 6 };
    }
    const seen: string[] = [];
    for await (const event of endsInOrder(events())) seen.push(`${event.phase} ${event.index} at ${event.at}`);
    // An end held back keeps the time it happened at.
    expect(seen).toEqual(['start 0 at 1', 'start 1 at 2', 'start 2 at 4', 'fail 0 at 5', 'end 1 at 3', 'end 2 at 6']);
  });

  it('times each search of a round by its own end, not by when a slower search planned before it lets it through', async () => {
    const rag = new SlowRAG();
    await rag.addDocuments(corpus);
    // The first sub-query's search is slow and fails; the second's is quick.
    rag.delays.set('zebra', 600);
    rag.failing.add('zebra');
    const agent = new AgenticRetriever({ retrievers: [{ name: 'notes', description: 'Notes', rag }], chat: planner(), generateResponse: false });
    const steps = new Map<string, { status: string; ms?: number }>();
    for await (const event of agent.stream('giraffe necks')) {
      if (event.type === 'trace' && event.step === 'retrieval' && event.status !== 'inProgress') steps.set(String(event.input.query), event);
    }
    const slow = steps.get('zebra')!;
    const quick = steps.get('okapi')!;
    expect(slow.status).toBe('failed');
    expect(quick.status).toBe('succeeded');
    expect(slow.ms).toBeGreaterThanOrEqual(590);
    // Stamped when it was yielded, the quick search would report about the slow one's 600 ms.
    expect(quick.ms).toBeLessThan(slow.ms! / 2);
  });
});
