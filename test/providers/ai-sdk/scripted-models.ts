import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2StreamPart,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { deltasOf, fakeReply, words } from '../../servers/loopback-server.ts';

/** The text of a prompt's messages, as `{role, content}` (the fake models work on these). */
export function promptMessages(prompt: LanguageModelV3CallOptions['prompt'] | LanguageModelV2CallOptions['prompt']): Array<{ role: string; content: string }> {
  return prompt.map((message) => ({
    role: message.role,
    content: typeof message.content === 'string' ? message.content : message.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  }));
}

/** A `ReadableStream` of these parts, ending after the last one; each read waits for `signal`. */
export function partStream<Part>(parts: Part[], signal?: AbortSignal, delayMs = 0): ReadableStream<Part> {
  let index = 0;
  return new ReadableStream<Part>({
    async pull(controller) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (signal?.aborted) {
        controller.error(signal.reason);
        return;
      }
      if (index < parts.length) controller.enqueue(parts[index++]);
      else controller.close();
    },
  });
}

/**
 * A scripted V3 language model (`MockLanguageModelV3` from `ai/test`): it echoes the last user message
 * (`Echo: …`) or says `reply(prompt)`, counts words as tokens, and streams in parts of seven characters.
 */
export function scriptedModelV3(
  reply: (messages: Array<{ role: string; content: string }>) => string = fakeReply,
  options: { delayMs?: number } = {},
): MockLanguageModelV3 {
  const usageOf = (messages: Array<{ content: string }>, text: string) => ({
    inputTokens: { total: words(messages.map((message) => message.content).join(' ')).length, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: words(text).length, text: undefined, reasoning: undefined },
  });
  return new MockLanguageModelV3({
    provider: 'scripted.chat',
    modelId: 'scripted-v3',
    doGenerate: async ({ prompt, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const messages = promptMessages(prompt);
      const text = reply(messages);
      return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usageOf(messages, text), warnings: [] };
    },
    doStream: async ({ prompt, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const messages = promptMessages(prompt);
      const text = reply(messages);
      const parts: LanguageModelV3StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        ...deltasOf(text).map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 't', delta })),
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usageOf(messages, text) },
      ];
      return { stream: partStream(parts, abortSignal, options.delayMs) };
    },
  });
}

/** A scripted V2 language model (the `ai` 5 specification: usage as numbers, the finish reason a string), written here. */
export function scriptedModelV2(): LanguageModelV2 {
  return {
    specificationVersion: 'v2',
    provider: 'scripted.v2',
    modelId: 'scripted-v2',
    supportedUrls: {},
    doGenerate: async ({ prompt, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const text = fakeReply(promptMessages(prompt));
      return {
        content: [{ type: 'text', text }],
        finishReason: 'stop',
        usage: { inputTokens: 3, outputTokens: words(text).length, totalTokens: undefined },
        warnings: [],
      };
    },
    doStream: async ({ prompt, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const text = fakeReply(promptMessages(prompt));
      const parts: LanguageModelV2StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        ...deltasOf(text).map((delta): LanguageModelV2StreamPart => ({ type: 'text-delta', id: 't', delta })),
        { type: 'finish', finishReason: 'length', usage: { inputTokens: 3, outputTokens: words(text).length, totalTokens: undefined } },
      ];
      return { stream: partStream(parts, abortSignal) };
    },
  };
}
