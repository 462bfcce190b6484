import { describe, expect, it } from 'vitest';
import type { ChatFinish, ChatProvider } from '../../src/contracts/chat.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { rejectionOf, streamText } from '../helpers/provider-test-helpers.ts';
import type { FailureMode, LoopbackServer } from '../servers/loopback-server.ts';

type StreamFailure = FailureMode & { kind: 'events' | 'chunks' };

export interface StreamFaultSetup {
  server(): LoopbackServer;
  /** The provider, built with `maxRetries: 0`. */
  create(): ChatProvider;
  /** The fake model's reply to `QUESTION` (`Echo: …`). */
  reply: string;
  /** A stream cut after its text (`The Eiffel tower is`): no end event. */
  cut: StreamFailure;
  /** A stream whose text is `The Eiffel tower is` and that ends because it hit the token limit. */
  limited: StreamFailure;
}

const QUESTION = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];

/**
 * What a chat stream must do with a reply that is not a whole stream: a 200 that holds no stream is
 * `PROVIDER_RESPONSE_INVALID`; a stream without its end event, or stopped by the token limit, is reported truncated
 * through `onFinish`; a connection lost mid-stream says so. Also: usage is reported once, after a whole stream.
 */
export function describeStreamFaults(setup: StreamFaultSetup): void {
  const collect = (finishes: ChatFinish[] = [], usages: Usage[] = []) =>
    streamText(setup.create().stream(QUESTION, { onFinish: (finish) => finishes.push(finish), onUsage: (usage) => usages.push(usage) }));

  describe('stream faults', () => {
    it.each([
      ['HTML', 'text/html', '<html><body>Bad gateway</body></html>'],
      ['{}', 'application/json', '{}'],
      ['malformed JSON', 'application/json', '{"choices": [{"delta'],
      ['an empty body', 'text/event-stream', ''],
    ])('a 200 whose body is %s is PROVIDER_RESPONSE_INVALID', async (_label, contentType, body) => {
      setup.server().failNext({ kind: 'raw', status: 200, contentType, body });
      const error = await rejectionOf(collect());
      expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
    });

    it('a complete stream reports a finish that is not truncated, and its usage once', async () => {
      const finishes: ChatFinish[] = [];
      const usages: Usage[] = [];
      expect(await collect(finishes, usages)).toBe(setup.reply);
      expect(finishes).toEqual([expect.objectContaining({ truncated: false })]);
      expect(usages).toHaveLength(1);
    });

    it('a stream that ends without its end event is reported truncated', async () => {
      setup.server().failNext(setup.cut);
      const finishes: ChatFinish[] = [];
      expect(await collect(finishes)).toMatch(/^The Eiffel tower is/);
      expect(finishes).toEqual([expect.objectContaining({ truncated: true, reason: 'incomplete' })]);
    });

    it('a stream stopped by the token limit is reported truncated', async () => {
      setup.server().failNext(setup.limited);
      const finishes: ChatFinish[] = [];
      expect(await collect(finishes)).toBe('The Eiffel tower is');
      expect(finishes).toEqual([expect.objectContaining({ truncated: true, reason: 'length' })]);
    });

    it('a connection lost mid-stream says so, and does not blame the base URL', async () => {
      setup.server().failNext({ ...setup.cut, end: 'destroy' });
      const usages: Usage[] = [];
      const error = await rejectionOf(collect([], usages));
      expect(error.message).toMatch(/mid-stream/i);
      expect(error.message).not.toMatch(/base URL/);
      expect(error).toMatchObject({ code: 'PROVIDER_STREAM_INTERRUPTED' });
      expect(usages).toEqual([]);
    });
  });
}
