import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatProvider } from '../src/contracts/chat.ts';
import { usageRecorder } from './usage.ts';

const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You answer with exactly the word the user asks for, and nothing else.' },
  { role: 'user', content: 'Reply with the single word: pong' },
];

export interface ChatConformanceOptions {
  /** Against a real service the streamed text need not equal a separate completion word for word. */
  live?: boolean;
}

/**
 * The contract every `ChatProvider` must meet. Call inside a `describe`; `create` is called in each test.
 */
export function describeChatConformance(create: () => ChatProvider, options: ChatConformanceOptions = {}): void {
  describe('chat conformance', () => {
    it('declares its name', () => {
      expect(create().name).toMatch(/^[a-z0-9-]+$/);
    });

    it('completes a conversation with text', async () => {
      const text = await create().complete(MESSAGES, { maxTokens: 20 });
      expect(text.toLowerCase()).toContain('pong');
    });

    it('streams the reply as string deltas', async () => {
      const chat = create();
      const deltas: string[] = [];
      for await (const delta of chat.stream(MESSAGES, { maxTokens: 20 })) deltas.push(delta);
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.every((delta) => typeof delta === 'string' && delta.length > 0)).toBe(true);
      expect(deltas.join('').toLowerCase()).toContain('pong');
      if (!options.live) expect(deltas.join('')).toBe(await chat.complete(MESSAGES));
    });

    it('reports the usage of a call at most once, as counts or unknown', async () => {
      const completed = usageRecorder();
      await create().complete(MESSAGES, { maxTokens: 20, onUsage: completed.onUsage });
      completed.expectWellFormed();
      const streamed = usageRecorder();
      for await (const _delta of create().stream(MESSAGES, { maxTokens: 20, onUsage: streamed.onUsage })) {
        // draining
      }
      streamed.expectWellFormed();
    });

    it('can be left early without hanging', async () => {
      for await (const delta of create().stream(MESSAGES, { maxTokens: 20 })) {
        expect(typeof delta).toBe('string');
        break;
      }
    });

    it('refuses an empty conversation with INVALID_MESSAGES', async () => {
      await expect(create().complete([])).rejects.toMatchObject({ code: 'INVALID_MESSAGES' });
    });

    it('rejects with ABORTED when the signal has already fired', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(create().complete(MESSAGES, { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
      const stream = create().stream(MESSAGES, { signal: controller.signal });
      await expect(
        (async () => {
          for await (const _delta of stream) {
            // draining
          }
        })(),
      ).rejects.toMatchObject({ code: 'ABORTED' });
    });
  });
}
