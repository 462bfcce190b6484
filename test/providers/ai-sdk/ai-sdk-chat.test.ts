import { APICallError } from '@ai-sdk/provider';
import type { LanguageModelV4 } from '@ai-sdk/provider-v4';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { AISdkChat } from '../../../providers/ai-sdk/ai-sdk-chat.ts';
import type { ChatFinish } from '../../../src/contracts/chat.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { recordingRetryPolicy, rejectionOf, streamText } from '../../helpers/provider-test-helpers.ts';
import { partStream, scriptedModelV2, scriptedModelV3 } from './scripted-models.ts';

const question = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Where is the Eiffel tower?' },
];

function apiCallError(statusCode: number, headers: Record<string, string> = {}): APICallError {
  return new APICallError({
    message: `HTTP ${statusCode} from the provider`,
    url: 'https://provider.test/v1',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
  });
}

describe('AISdkChat: an AI SDK language model as a ChatProvider', () => {
  describe('LanguageModelV3 (ai 6, MockLanguageModelV3 from ai/test)', () => {
    describeChatConformance(() => new AISdkChat(scriptedModelV3()));
  });

  describe('LanguageModelV2 (ai 5)', () => {
    describeChatConformance(() => new AISdkChat(scriptedModelV2()));
  });

  it('accepts LanguageModelV4 (ai 7) by its type, and a V4 model at run time', async () => {
    expectTypeOf<LanguageModelV4>().toExtend<ConstructorParameters<typeof AISdkChat>[0]>();
    const v3 = scriptedModelV3();
    const v4 = { ...v3, specificationVersion: 'v4', provider: v3.provider, modelId: v3.modelId, doGenerate: v3.doGenerate, doStream: v3.doStream };
    expect(await new AISdkChat(v4).complete(question)).toBe('Echo: Where is the Eiffel tower?');
  });

  it('sends the prompt in the specification shape: system text, user and assistant text parts, the limits', async () => {
    const model = scriptedModelV3();
    await new AISdkChat(model, { temperature: 0.2 }).complete([...question, { role: 'assistant', content: 'In Paris.' }, { role: 'user', content: 'Sure?' }], {
      maxTokens: 30,
    });
    expect(model.doGenerateCalls[0]).toMatchObject({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Where is the Eiffel tower?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'In Paris.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Sure?' }] },
      ],
      temperature: 0.2,
      maxOutputTokens: 30,
    });
    expect(model.doGenerateCalls[0].abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('reports usage from V3 {total} objects and V2 numbers, and unknown when the model has none', async () => {
    const usages: Usage[] = [];
    const onUsage = (usage: Usage) => usages.push(usage);
    await new AISdkChat(scriptedModelV3()).complete(question, { onUsage });
    await streamText(new AISdkChat(scriptedModelV3()).stream(question, { onUsage }));
    await new AISdkChat(scriptedModelV2()).complete(question, { onUsage });
    const silent = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'hi' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: undefined, text: undefined, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    await new AISdkChat(silent).complete(question, { onUsage });
    expect(usages).toEqual([{ inputTokens: 7, outputTokens: 6 }, { inputTokens: 7, outputTokens: 6 }, { inputTokens: 3, outputTokens: 6 }, 'unknown']);
  });

  it('maps the finish reason: a V2 length finish is reported truncated', async () => {
    const finishes: ChatFinish[] = [];
    await streamText(new AISdkChat(scriptedModelV2()).stream(question, { onFinish: (finish) => finishes.push(finish) }));
    expect(finishes).toEqual([{ reason: 'length', truncated: true }]);
  });

  it('retries an APICallError 429 after its retry-after, and fails at once on a 401', async () => {
    const model = scriptedModelV3();
    const generate = model.doGenerate;
    let calls = 0;
    model.doGenerate = async (options) => {
      calls++;
      if (calls === 1) throw apiCallError(429, { 'retry-after': '2' });
      return generate(options);
    };
    const { policy, sleeps } = recordingRetryPolicy();
    expect(await new AISdkChat(model, { retryPolicy: policy }).complete(question)).toMatch(/^Echo/);
    expect(sleeps).toEqual([2000]);

    model.doGenerate = async () => {
      throw apiCallError(401);
    };
    const error = await rejectionOf(new AISdkChat(model, { retryPolicy: recordingRetryPolicy().policy }).complete(question));
    expect(error).toMatchObject({ name: 'ProviderError', status: 401, code: 'PROVIDER_AUTH_FAILED' });
    expect(error.message).toContain('[ai-sdk-scripted-chat]');
  });

  it('passes the caller signal as abortSignal: a stream cancelled mid-way is ABORTED', async () => {
    const chat = new AISdkChat(scriptedModelV3(undefined, { delayMs: 20 }));
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const delta of chat.stream(question, { signal: controller.signal })) {
          deltas.push(delta);
          controller.abort(new Error('user left'));
        }
      })(),
    );
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(deltas).toHaveLength(1);
  });

  it('turns an error part of the stream into a ProviderError', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: partStream([
          { type: 'text-delta', id: 't', delta: 'The' },
          { type: 'error', error: apiCallError(500) },
        ]),
      }),
    });
    const error = await rejectionOf(streamText(new AISdkChat(model).stream(question)));
    expect(error).toMatchObject({ name: 'ProviderError', status: 500 });
  });

  it('refuses a model of a specification it does not read', () => {
    expect(() => new AISdkChat({ ...scriptedModelV3(), specificationVersion: 'v1' })).toThrow(/specification "v1"; Axon reads v2, v3, v4/);
  });
});
