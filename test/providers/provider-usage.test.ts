/**
 * The usage each existing provider reports: the service's own counts, once per call, and `'unknown'` when the
 * service sends none (never an estimate).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereChat } from '../../providers/cohere/cohere-chat.ts';
import { CohereEmbeddings } from '../../providers/cohere/cohere-embeddings.ts';
import { CohereRerankModel } from '../../providers/cohere/cohere-rerank.ts';
import { JinaEmbeddings } from '../../providers/jina/jina-embeddings.ts';
import { JinaRerankModel } from '../../providers/jina/jina-rerank.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { LocalAIRerankModel } from '../../providers/localai/localai-rerank.ts';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { streamText, TEST_KEY } from '../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../servers/cohere-server.ts';
import { startJinaServer } from '../servers/jina-server.ts';
import { startLocalAIServer } from '../servers/localai-server.ts';
import type { LoopbackServer } from '../servers/loopback-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';

let openai: LoopbackServer;
let cohere: LoopbackServer;
let jina: LoopbackServer;
let localai: LoopbackServer;
beforeAll(async () => {
  [openai, cohere, jina, localai] = await Promise.all([startOpenAIServer(), startCohereServer(), startJinaServer(), startLocalAIServer()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), cohere.close(), jina.close(), localai.close()]);
});

const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];

function recorder(): { usages: Usage[]; onUsage: (usage: Usage) => void } {
  const usages: Usage[] = [];
  return { usages, onUsage: (usage) => usages.push(usage) };
}

describe('usage reported by the existing providers', () => {
  it('OpenAI chat: usage.prompt_tokens and completion_tokens; a compatible stream without usage is unknown', async () => {
    const chat = new OpenAIChat({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1` });
    const { usages, onUsage } = recorder();
    await chat.complete(question, { onUsage });
    await streamText(chat.stream(question, { onUsage }));
    expect(usages).toEqual([{ inputTokens: 10, outputTokens: 5 }, 'unknown']);
    expect(openai.requests.at(-1)?.body).not.toHaveProperty('stream_options');
  });

  it('OpenAI chat on api.openai.com: asks for stream usage and reads the last chunk', async () => {
    const bodies: unknown[] = [];
    const fakeFetch: typeof fetch = async (_input, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      const chunk = (payload: object) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', ...payload })}\n\n`;
      const body =
        chunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }], usage: null }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }) +
        chunk({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }) +
        'data: [DONE]\n\n';
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    };
    const { usages, onUsage } = recorder();
    expect(await streamText(new OpenAIChat({ apiKey: TEST_KEY, fetch: fakeFetch }).stream(question, { onUsage }))).toBe('hi');
    expect(bodies[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(usages).toEqual([{ inputTokens: 12, outputTokens: 1 }]);
  });

  it('OpenAI embeddings: usage.prompt_tokens', async () => {
    const { usages, onUsage } = recorder();
    await new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1`, model: 'm' }).embed(['a', 'b', 'c'], { inputType: 'document', onUsage });
    expect(usages).toEqual([{ inputTokens: 3 }]);
  });

  it('Cohere: billed input tokens for embed, search units for rerank, billed tokens for chat and its stream', async () => {
    const { usages, onUsage } = recorder();
    await new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: cohere.url, model: 'm' }).embed(['a', 'b'], { inputType: 'document', onUsage });
    await new CohereRerankModel({ apiKey: TEST_KEY, baseURL: cohere.url }).rerank('q', ['a', 'b'], { topN: 1, onUsage });
    const chat = new CohereChat({ apiKey: TEST_KEY, baseURL: cohere.url });
    await chat.complete(question, { onUsage });
    await streamText(chat.stream(question, { onUsage }));
    expect(usages).toEqual([{ inputTokens: 2 }, { searchUnits: 1 }, { inputTokens: 10, outputTokens: 5 }, { inputTokens: 10, outputTokens: 5 }]);
  });

  it('Jina and LocalAI: usage.total_tokens (prompt_tokens for embeddings); none sent is unknown', async () => {
    const { usages, onUsage } = recorder();
    await new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: `${jina.url}/v1`, model: 'm' }).embed(['a', 'b'], { inputType: 'document', onUsage });
    await new JinaRerankModel({ apiKey: TEST_KEY, baseURL: `${jina.url}/v1` }).rerank('q', ['a', 'b', 'c'], { topN: 1, onUsage });
    await new LocalAIRerankModel({ host: localai.url }).rerank('q', ['a'], { topN: 1, onUsage });
    localai.failNext({ kind: 'respond', body: { results: [{ index: 0, relevance_score: 0.5 }] } });
    await new LocalAIRerankModel({ host: localai.url }).rerank('q', ['a'], { topN: 1, onUsage });
    expect(usages).toEqual([{ inputTokens: 10 }, { inputTokens: 30 }, { inputTokens: 10 }, 'unknown']);
  });

  it('the local hashing embedder reports that nothing was metered', async () => {
    const { usages, onUsage } = recorder();
    await new LocalHashEmbeddings().embed(['a'], { inputType: 'document', onUsage });
    expect(usages).toEqual([{}]);
  });
});
