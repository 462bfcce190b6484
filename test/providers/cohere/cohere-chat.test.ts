import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereChat } from '../../../providers/cohere/cohere-chat.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
let slowStreamServer: LoopbackServer;
beforeAll(async () => {
  server = await startCohereServer();
  slowStreamServer = await startCohereServer({ streamDelayMs: 400 });
});
afterAll(async () => {
  await server.close();
  await slowStreamServer.close();
});

const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];

describe('CohereChat against a loopback Cohere server', () => {
  describeChatConformance(() => new CohereChat({ apiKey: TEST_KEY, baseURL: server.url }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v2/chat',
    create: (transport) => new CohereChat({ apiKey: TEST_KEY, baseURL: server.url, ...transport }),
    call: (provider, signal) => (provider as CohereChat).complete(question, { signal }),
  });

  it('sends the conversation, temperature and max_tokens exactly', async () => {
    server.reset();
    const chat = new CohereChat({ apiKey: TEST_KEY, baseURL: server.url, temperature: 0.3 });
    expect(await chat.complete([{ role: 'system', content: 'Be brief.' }, ...question], { maxTokens: 64 })).toBe('Echo: Where is the Eiffel tower?');
    expect(server.requests[0].body).toEqual({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Where is the Eiffel tower?' },
      ],
      temperature: 0.3,
      max_tokens: 64,
      stream: false,
    });
  });

  it('streams content-delta texts in order and ignores the other events', async () => {
    server.reset();
    const deltas: string[] = [];
    for await (const delta of new CohereChat({ apiKey: TEST_KEY, baseURL: server.url }).stream(question)) deltas.push(delta);
    expect(deltas).toEqual(['Echo: W', 'here is', ' the Ei', 'ffel to', 'wer?']);
    expect((server.requests[0].body as { stream: boolean }).stream).toBe(true);
  });

  it('times out a stream whose next event takes longer than timeoutMs', async () => {
    const chat = new CohereChat({ apiKey: TEST_KEY, baseURL: slowStreamServer.url, timeoutMs: 150, maxRetries: 0 });
    const error = await rejectionOf(
      (async () => {
        for await (const _delta of chat.stream(question)) {
          // consuming
        }
      })(),
    );
    expect(error).toMatchObject({ code: 'PROVIDER_TIMEOUT' });
  });

  it('refuses a reply without message content', async () => {
    server.failNext({ kind: 'respond', body: { id: 'x', finish_reason: 'COMPLETE', message: { role: 'assistant' } } });
    const error = await rejectionOf(new CohereChat({ apiKey: TEST_KEY, baseURL: server.url }).complete(question));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('message.content is missing');
  });
});
