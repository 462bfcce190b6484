import { describe, expect, it } from 'vitest';
import { priceTableSchema } from '../../src/pipeline/price-table.ts';
import { type PriceTable, UsageTally, usageSince, usageSource } from '../../src/pipeline/usage.ts';

const chat = { kind: 'chat' as const, provider: 'openai-chat', model: 'gpt-4o-mini' };
const rerank = { kind: 'rerank' as const, provider: 'cohere-rerank', model: 'rerank-v3.5' };

const table = (models: PriceTable['models']): PriceTable => ({ currency: 'USD', asOf: '2026-11-30', models });

describe('UsageTally', () => {
  it('sums counts per kind, provider and model; a call with no report or `unknown` is an unknown call and adds no count', () => {
    const tally = new UsageTally();
    tally.record(chat, [{ inputTokens: 10, outputTokens: 5 }]);
    tally.record(chat, ['unknown']);
    tally.record(chat, []);
    // One call of a provider that made two requests (an embed split into batches) reports twice.
    tally.record(chat, [{ inputTokens: 1 }, { inputTokens: 2, outputTokens: 3 }]);
    tally.record(rerank, [{ searchUnits: 1 }]);
    expect(tally.summary()).toEqual({
      entries: [
        { ...chat, calls: 4, unknownCalls: 2, inputTokens: 13, outputTokens: 8 },
        { ...rerank, calls: 1, unknownCalls: 0, searchUnits: 1 },
      ],
      calls: 5,
      unknownCalls: 2,
    });
  });

  it('a local provider that reports `{}` is a known call with no counts, and needs no price', () => {
    const tally = new UsageTally();
    tally.record({ kind: 'embeddings', provider: 'local-hash-embeddings' }, [{}]);
    expect(tally.summary(table({}))).toEqual({
      entries: [{ kind: 'embeddings', provider: 'local-hash-embeddings', calls: 1, unknownCalls: 0 }],
      calls: 1,
      unknownCalls: 0,
      currency: 'USD',
      pricesAsOf: '2026-11-30',
    });
  });

  it('costs by the table; a count without its price leaves the entry unpriced rather than half costed', () => {
    const tally = new UsageTally();
    tally.record(chat, [{ inputTokens: 2_000_000, outputTokens: 1_000_000 }]);
    tally.record(rerank, [{ searchUnits: 3 }]);
    const priced = tally.summary(
      table({ 'openai-chat/gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 }, 'cohere-rerank/rerank-v3.5': { perSearchUnit: 0.002 } }),
    );
    expect(priced.entries.map((entry) => entry.cost)).toEqual([0.9, 0.006]);
    expect(priced.cost).toBe(0.906);
    expect(priced).not.toHaveProperty('unpriced');

    const inputOnly = tally.summary(table({ 'openai-chat/gpt-4o-mini': { inputPerMillion: 0.15 } }));
    expect(inputOnly.entries[0]).not.toHaveProperty('cost');
    expect(inputOnly).not.toHaveProperty('cost');
    expect(inputOnly.unpriced).toEqual(['openai-chat/gpt-4o-mini', 'cohere-rerank/rerank-v3.5']);
  });

  it('usageSince gives what a step added to a tally', () => {
    const tally = new UsageTally();
    tally.record(chat, [{ inputTokens: 10, outputTokens: 5 }]);
    const before = tally.snapshot();
    tally.record(chat, [{ inputTokens: 7, outputTokens: 1 }]);
    tally.record(rerank, ['unknown']);
    expect(usageSince(before, tally.snapshot())).toEqual({
      entries: [
        { ...chat, calls: 1, unknownCalls: 0, inputTokens: 7, outputTokens: 1 },
        { ...rerank, calls: 1, unknownCalls: 1 },
      ],
      calls: 2,
      unknownCalls: 1,
    });
  });
});

describe('usageSource', () => {
  it('names the model by a string `model`, or by the `modelId` of a model object', () => {
    expect(usageSource('chat', { name: 'openai-chat', model: 'gpt-4o', genAiProvider: 'openai' } as never)).toEqual({
      kind: 'chat',
      provider: 'openai-chat',
      model: 'gpt-4o',
      genAiProvider: 'openai',
    });
    expect(usageSource('embeddings', { name: 'ai-sdk-openai', model: { modelId: 'text-embedding-3-large' } } as never)).toMatchObject({
      model: 'text-embedding-3-large',
    });
    expect(usageSource('rerank', { name: 'custom' })).toEqual({ kind: 'rerank', provider: 'custom' });
  });
});

describe('priceTableSchema', () => {
  it('needs the currency and the day the prices were read, a real day', () => {
    expect(priceTableSchema.safeParse(table({ 'openai-chat/gpt-4o-mini': { inputPerMillion: 0.15 } })).success).toBe(true);
    expect(priceTableSchema.safeParse({ currency: 'USD', models: {} }).success).toBe(false);
    expect(priceTableSchema.safeParse({ currency: 'USD', asOf: '2026-02-30', models: {} }).success).toBe(false);
    expect(priceTableSchema.safeParse({ currency: 'USD', asOf: 'last week', models: {} }).success).toBe(false);
  });

  it('refuses a price that is negative, an entry with no price, and a key that is not provider/model', () => {
    expect(priceTableSchema.safeParse(table({ 'openai-chat/gpt-4o-mini': { inputPerMillion: -1 } })).success).toBe(false);
    expect(priceTableSchema.safeParse(table({ 'openai-chat/gpt-4o-mini': {} })).success).toBe(false);
    expect(priceTableSchema.safeParse(table({ '/gpt-4o-mini': { inputPerMillion: 1 } })).success).toBe(false);
    expect(priceTableSchema.safeParse(table({ 'openai-chat/gpt-4o-mini': { inputPerMilion: 1 } as never })).success).toBe(false);
  });
});
