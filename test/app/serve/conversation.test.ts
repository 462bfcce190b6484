import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../../../app/serve/index.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { MemoryChatHistory } from '../../../src/conversation/memory-chat-history.ts';
import { RAG } from '../../../src/rag.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { parseEvents } from './fixture.ts';

// The page's conversations through its API: POST /api/ask with a conversation id continues the conversation (the
// follow-up searched rewritten, the turn recorded); GET /api/conversations lists them with their turns.

class GlacierRAG extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
}

const FIRST = 'Who led the 2019 survey of the Orvik glacier?';
const FOLLOW_UP = 'When did she retire?';

let server: RunningServer;
let rag: GlacierRAG;
const history = new MemoryChatHistory();

beforeAll(async () => {
  rag = new GlacierRAG();
  await rag.addDocuments([
    { content: 'The 2019 survey of the Orvik glacier was led by Dr. Hanne Lund of the Norwegian Polar Institute.', sourceName: 'survey.md' },
    { content: 'Hanne Lund retired in 2021, after thirty years at the Norwegian Polar Institute.', sourceName: 'lund.md' },
    { content: 'Mette Dahl, the harbour pilot, retired when she turned sixty.', sourceName: 'harbour.md' },
  ]);
  server = await serve(rag, { chatHistory: history });
});
afterAll(async () => {
  await server.close();
  await rag.close();
});

const api = (path: string, init: RequestInit = {}) => fetch(`${server.origin}${path}`, { ...init, headers: { 'x-axon-token': server.token, ...init.headers } });
const ask = async (body: unknown) => {
  const response = await api('/api/ask', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return {
    status: response.status,
    events: response.status === 200 ? parseEvents(await response.text()) : [],
    body: response.status === 200 ? undefined : await response.json(),
  };
};

describe('serve: conversations', () => {
  it('continues a conversation: the follow-up is searched rewritten, shown beside the typed one, and recorded', async () => {
    const first = (await ask({ question: FIRST, conversationId: 'thread-1' })).events.at(-1)!;
    expect(first.event).toBe('result');
    expect(first.data).toMatchObject({ conversationId: 'thread-1', question: FIRST });
    expect((first.data as { searchedQuestion?: string }).searchedQuestion).toBeUndefined();

    const { events } = await ask({ question: FOLLOW_UP, conversationId: 'thread-1' });
    const condense = events.find((event) => event.event === 'stage' && (event.data as { stage: string }).stage === 'condense');
    expect(condense?.data).toMatchObject({ name: 'offline-condense', detail: { input: FOLLOW_UP } });
    const result = events.at(-1)!.data as { question: string; searchedQuestion: string; citations: { sourceName: string }[] };
    expect(result.question).toBe(FOLLOW_UP);
    expect(result.searchedQuestion).toMatch(/^When did she retire\? .*Hanne Lund/);
    expect(result.citations.map((citation) => citation.sourceName)).toContain('lund.md');

    const turns = await history.load('thread-1');
    expect(turns.map((turn) => [turn.question, turn.searchedQuestion])).toEqual([
      [FIRST, FIRST],
      [FOLLOW_UP, result.searchedQuestion],
    ]);
  });

  it('asks without a conversation as before: searched as typed, nothing recorded', async () => {
    const before = (await history.list()).length;
    const result = (await ask({ question: FOLLOW_UP })).events.at(-1)!.data as { searchedQuestion?: string; conversationId?: string };
    expect(result.searchedQuestion).toBeUndefined();
    expect(result.conversationId).toBeUndefined();
    expect((await history.list()).length).toBe(before);
  });

  it('continues a conversation with an agentic run, recording it as a turn', async () => {
    await ask({ question: FIRST, conversationId: 'thread-agentic' });
    const { events } = await ask({ question: FOLLOW_UP, conversationId: 'thread-agentic', agentic: true });
    const steps = events.filter((event) => event.event === 'agentic').map((event) => (event.data as { step: string }).step);
    expect(steps[0]).toBe('condense');
    const result = events.at(-1)!;
    expect(result.event).toBe('agentic-result');
    expect(result.data).toMatchObject({ conversationId: 'thread-agentic', question: FOLLOW_UP });
    expect((result.data as { searchedQuestion: string }).searchedQuestion).toMatch(/Hanne Lund/);
    expect((await history.load('thread-agentic')).map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
  });

  it('lists the conversations with their first question, and gives one with its turns', async () => {
    const list = await api('/api/conversations');
    expect(list.status).toBe(200);
    const { conversations } = (await list.json()) as { conversations: { id: string; turns: number; firstQuestion: string }[] };
    expect(conversations.find((info) => info.id === 'thread-1')).toMatchObject({ turns: 2, firstQuestion: FIRST });

    const one = await api('/api/conversations/thread-1');
    expect(one.status).toBe(200);
    const body = (await one.json()) as { id: string; turns: { question: string; searchedQuestion: string; answer: string }[] };
    expect(body.id).toBe('thread-1');
    expect(body.turns.map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
    expect(body.turns[1].searchedQuestion).toMatch(/Hanne Lund/);
  });

  it('refuses a bad conversation id, says when there is none, and needs the token', async () => {
    const bad = await ask({ question: FIRST, conversationId: '../elsewhere' });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/conversationId: must be 1 to 128 letters/);
    expect((await api('/api/conversations/a.b')).status).toBe(400);
    expect((await api('/api/conversations/never-asked')).status).toBe(404);
    expect((await fetch(`${server.origin}/api/conversations`)).status).toBe(403);
  });
});
