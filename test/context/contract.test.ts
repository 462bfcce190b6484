import { mkdtemp, readFile, rm, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectConflicts, findSuperseded, uncitedSentences } from '../../src/context/contract.ts';
import { diffTraces, hashConfiguration, JsonlTraceStore, type StoredTrace } from '../../src/context/trace-store.ts';
import type { Document, JsonValue } from '../../src/document.ts';

function doc(id: string, metadata: Record<string, JsonValue>): Document {
  return { id, content: `content of ${id}`, sourceType: 'file', sourceName: `${id}.md`, score: 1, metadata };
}

describe('findSuperseded', () => {
  it('finds documents named by id or by document key, but not sibling chunks of the same version', () => {
    const old = doc('old', { documentKey: 'refund-policy', version: 1 });
    const current = doc('new', { documentKey: 'refund-policy', version: 2, supersedes: 'refund-policy' });
    const sibling = doc('new-2', { documentKey: 'refund-policy', version: 2 });
    const byId = doc('x', { supersedes: ['old-memo'] });
    const memo = doc('old-memo', {});
    expect(findSuperseded([old, current, sibling, byId, memo])).toEqual(
      new Map([
        ['old', 'new'],
        ['old-memo', 'x'],
      ]),
    );
    expect(findSuperseded([old, sibling])).toEqual(new Map());
  });
});

describe('detectConflicts', () => {
  it('flags two versions of one document and one fact with two values', () => {
    const conflicts = detectConflicts([
      doc('v1', { documentKey: 'handbook', version: '2025' }),
      doc('v1b', { documentKey: 'handbook', version: '2025' }),
      doc('v2', { documentKey: 'handbook', version: '2026' }),
      doc('a', { facts: { 'refund.days': 14 } }),
      doc('b', { facts: { 'refund.days': 30, other: 'x' } }),
      doc('c', { facts: { 'refund.days': '14' } }),
    ]);
    expect(conflicts).toEqual([
      { kind: 'versions', key: 'handbook', refs: ['v1', 'v2'], values: ['2025', '2026'] },
      { kind: 'fact', key: 'refund.days', refs: ['a', 'b'], values: ['14', '30'] },
    ]);
  });

  it('with a question, counts only sources that bear on it', () => {
    const sheet = { ...doc('sheet', { facts: { 'x200.warranty.years': 2 } }), content: 'The X200 laptop carries a warranty of two years.' };
    const faq = { ...doc('faq', { facts: { 'x200.warranty.years': 3 } }), content: 'The X200 laptop carries a warranty of three years.' };
    expect(detectConflicts([sheet, faq], 'How many days until refunds are processed?')).toEqual([]);
    expect(detectConflicts([sheet, faq], 'How long is the X200 warranty?')).toHaveLength(1);
  });

  it('finds nothing when sources agree', () => {
    expect(detectConflicts([doc('a', { facts: { x: 'Yes ' } }), doc('b', { facts: { x: 'yes' } }), doc('c', { documentKey: 'k', version: 1 })])).toEqual([]);
  });
});

describe('uncitedSentences', () => {
  it('lists statements without a citation, counting a citation standing right after a sentence', () => {
    const text =
      'Refunds take 14 days [1]. They are paid to the original card. Contact billing for exceptions. [2]\n' +
      '- Store credit is instant for members [3].\n- Gift cards are never refunded at all.';
    expect(uncitedSentences(text)).toEqual(['They are paid to the original card.', 'Gift cards are never refunded at all.']);
  });

  it('does not flag short sentences or statements that the answer is not in the documents', () => {
    expect(uncitedSentences('Yes. I cannot find this in the documents you gave me.')).toEqual([]);
  });
});

function trace(overrides: Partial<StoredTrace>): StoredTrace {
  return {
    format: 1,
    runId: 'run',
    startedAt: '2026-01-01T00:00:00.000Z',
    question: 'q',
    caller: {},
    status: 'answered',
    stopReason: 'answered',
    retrieved: [],
    packet: {
      packetId: 'p',
      runId: 'run',
      policyVersion: 'v',
      tokenizer: 't',
      sections: [],
      budget: { maxTokens: 1, reservedForOutput: 0, used: 1 },
      omitted: [],
      degradations: [],
    },
    citations: [],
    evidenceRefs: [],
    answer: 'a',
    version: {
      embedding: { name: 'e' },
      preProcessors: [],
      postProcessors: [],
      citationRules: 'c',
      policyVersion: 'v',
      tokenizer: 't',
      eligibilityPolicy: 'p',
    },
    stages: [],
    ms: 1,
    ...overrides,
  };
}

describe('JsonlTraceStore', () => {
  it('saves runs as JSON lines and finds them by a unique prefix, or the last one', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-traces-'));
    try {
      const store = new JsonlTraceStore(directory);
      expect(await store.last()).toBeUndefined();
      await store.save(trace({ runId: 'abc-1' }));
      await store.save(trace({ runId: 'abd-2' }));
      await appendFile(store.file, '{"runId": "torn');
      expect((await store.get('abc')).runId).toBe('abc-1');
      expect((await store.last())?.runId).toBe('abd-2');
      await expect(store.get('ab')).rejects.toMatchObject({ code: 'INVALID_ID' });
      await expect(store.get('zzz')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await readFile(store.file, 'utf8')).split('\n').filter(Boolean)).toHaveLength(3);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('diffTraces', () => {
  it('names what changed between two runs, ignoring ids and timings', () => {
    const a = trace({ runId: 'a', ms: 5 });
    const b = trace({ runId: 'b', ms: 9, version: { ...a.version, embedding: { name: 'e', dimensions: 512 } }, status: 'missing_evidence' });
    expect(diffTraces(a, b).map((difference) => difference.path)).toEqual(['version.embedding', 'status']);
    expect(diffTraces(a, trace({ runId: 'c' }))).toEqual([]);
  });
});

describe('hashConfiguration', () => {
  it('ignores key order and secrets, but not settings', () => {
    const one = hashConfiguration({ chat: { provider: 'openai', apiKey: 'sk-1' }, topK: 5 });
    expect(hashConfiguration({ topK: 5, chat: { apiKey: 'sk-2', provider: 'openai' } })).toBe(one);
    expect(hashConfiguration({ topK: 6, chat: { provider: 'openai' } })).not.toBe(one);
  });
});
