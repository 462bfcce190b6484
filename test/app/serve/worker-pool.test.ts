import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer, type RunView } from '../../../app/serve/index.ts';
import { AxonError } from '../../../src/errors.ts';
import { ANSWER, fixturePipeline, parseEvents } from './fixture.ts';

const FIXTURE = fileURLToPath(new URL('./fixture.ts', import.meta.url));

let server: RunningServer;
let pipeline: Awaited<ReturnType<typeof fixturePipeline>>;

beforeAll(async () => {
  pipeline = await fixturePipeline();
  // Each worker builds the same fixture pipeline (its own store, chat and trace store) from the fixture module.
  server = await serve(pipeline.rag, { workers: { count: 2, module: FIXTURE, export: 'fixturePipeline' } });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await pipeline?.rag.close();
});

const ask = (body: unknown, signal?: AbortSignal) =>
  fetch(`${server.origin}/api/ask`, {
    method: 'POST',
    headers: { 'x-axon-token': server.token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

describe('serve: questions answered by a pool of worker threads', () => {
  it('answers concurrent questions with the same events as the server’s own thread', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, async () => parseEvents(await (await ask({ question: 'How do I reset my password?' })).text())),
    );
    for (const events of answers) {
      expect(events[0].event).toBe('store');
      expect(events.at(-1)!.event).toBe('result');
      expect((events.at(-1)!.data as RunView).answer).toBe(ANSWER);
      expect(
        events
          .filter((event) => event.event === 'delta')
          .map((event) => (event.data as { text: string }).text)
          .join(''),
      ).toBe(ANSWER);
    }
  }, 60_000);

  it('sends a failure as an error event, and runs agentic questions too', async () => {
    const failed = parseEvents(await (await ask({ question: 'How?', filter: { $bogus: 1 } })).text());
    expect(failed.at(-1)!.event).toBe('error');
    const agentic = parseEvents(await (await ask({ question: 'How do I reset my password?', agentic: true })).text());
    expect(agentic.at(-1)!.event).toBe('agentic-result');
  }, 60_000);

  it('a worker whose module builds no pipeline fails the start with the reason', async () => {
    const failing = serve(pipeline.rag, { workers: { count: 1, module: FIXTURE, export: 'CORPUS' } });
    await expect(failing).rejects.toSatisfy(
      (error) => AxonError.isInstance(error) && error.code === 'CONFIG_INVALID' && /has no export "CORPUS"/.test(error.message),
    );
    await expect(serve(pipeline.rag, { workers: { count: 0, module: FIXTURE } })).rejects.toThrow(/workers.count/);
  }, 60_000);
});
