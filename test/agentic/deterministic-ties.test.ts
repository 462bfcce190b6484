import { describe, expect, it } from 'vitest';
import { AgenticRetriever } from '../../src/agentic/agentic-retriever.ts';
import { endsInOrder, type TaskEvent } from '../../src/agentic/event-stream.ts';
import type { DocumentInput } from '../../src/document.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';
import { CorpusRAG, callKind, json } from './fixtures.ts';

/** A pipeline whose searches take as long as `delays` says for their query, so they can finish in either order. */
class SlowRAG extends CorpusRAG {
  readonly delays = new Map<string, number>();
  override async retrieve(...[question, options]: Parameters<CorpusRAG['retrieve']>): ReturnType<CorpusRAG['retrieve']> {
    await new Promise((resolve) => setTimeout(resolve, this.delays.get(question) ?? 0));
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
      yield { phase: 'start', index: 0 };
      yield { phase: 'start', index: 1 };
      yield { phase: 'end', index: 1, value: 'second' };
      yield { phase: 'start', index: 2 };
      yield { phase: 'fail', index: 0, error: new Error('first') };
      yield { phase: 'end', index: 2, value: 'third' };
    }
    const seen: string[] = [];
    for await (const event of endsInOrder(events())) seen.push(`${event.phase} ${event.index}`);
    expect(seen).toEqual(['start 0', 'start 1', 'start 2', 'fail 0', 'end 1', 'end 2']);
  });
});
