import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import { checkEligibility, type CallerContext } from '../../src/context/eligibility.ts';
import { renderMessages } from '../../src/context/packet.ts';
import { JsonlTraceStore, type StoredTrace } from '../../src/context/trace-store.ts';
import type { DocumentInput, JsonValue } from '../../src/document.ts';
import { RAG } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';
import { mulberry32 } from '../helpers/random.ts';

class TestRAG extends RAG {
  constructor(private readonly chatModel?: ChatProvider) {
    super();
  }
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
  protected chat() {
    return this.chatModel;
  }
}

async function filled(documents: DocumentInput[], chat?: ChatProvider): Promise<TestRAG> {
  const rag = new TestRAG(chat);
  await rag.addDocuments(documents);
  return rag;
}

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

describe('RAG with a caller', () => {
  it('filters before retrieval, so topK is spent on documents the caller may see', async () => {
    const documents: DocumentInput[] = [
      ...Array.from({ length: 6 }, (_, index) => ({
        id: `globex-${index}`,
        content: `Refund policy: refunds take ${index + 1} days for globex customers.`,
        metadata: { tenantId: 'globex' },
      })),
      { id: 'acme', content: 'Acme refunds are paid back within a fortnight.', metadata: { tenantId: 'acme' } },
    ];
    const rag = await filled(documents);
    const unfiltered = await rag.retrieve('refund policy refunds days', { topK: 2, searchMode: 'vector' });
    expect(unfiltered.documents).toEqual([]);
    expect(unfiltered.omitted.map((entry) => entry.reason)).toEqual(['not_allowed', 'not_allowed']);

    const result = await rag.retrieve('refund policy refunds days', { topK: 2, searchMode: 'vector', caller: { tenantId: 'acme' } });
    expect(result.documents.map((document) => document.id)).toEqual(['acme']);
    expect(result.omitted).toEqual([]);
    expect(result.filter).toBeDefined();
    const search = result.trace.stages.find((stage) => stage.stage === 'search');
    expect(search?.detail).toMatchObject({ filtered: true, eligibilityFiltered: true });
    expect(result.trace.stages.map((stage) => stage.stage)).toContain('eligibility');
  });

  it("combines the caller's filter with the caller-given one", async () => {
    const rag = await filled([
      { id: 'a', content: 'Refunds take 14 days.', metadata: { tenantId: 'acme', lang: 'en' } },
      { id: 'b', content: 'Refunds take 14 days.', metadata: { tenantId: 'acme', lang: 'de' } },
    ]);
    const result = await rag.retrieve('refunds', { caller: { tenantId: 'acme' }, filter: { lang: 'de' } });
    expect(result.documents.map((document) => document.id)).toEqual(['b']);
  });

  // Generated cases: random documents, random callers; no packet ever holds a chunk the caller may not see.
  it('never puts a document the caller may not see into a packet', async () => {
    const random = mulberry32(42);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const documents: DocumentInput[] = Array.from({ length: 60 }, (_, index) => {
      const metadata: Record<string, JsonValue> = {};
      const tenant = pick([undefined, 'acme', 'globex', 'initech']);
      if (tenant) metadata.tenantId = tenant;
      const roles = pick([undefined, ['support'], ['finance'], ['finance', 'admin']]);
      if (roles) metadata.allowedRoles = roles;
      const redaction = pick([undefined, 'none', 'pii', 'secret', 'tenant_scoped']);
      if (redaction) metadata.redaction = redaction;
      const trust = pick([undefined, 'trusted', 'public', 'unknown']);
      if (trust) metadata.trustLevel = trust;
      if (random() < 0.3) Object.assign(metadata, { updatedAt: pick(['2024-01-01', '2026-05-01']), maxAgeDays: 180 });
      return {
        id: `doc-${index}`,
        content: `Refund rule ${index}: refunds for case ${index} take ${index % 9} days; contact ops${index}@example.com.`,
        metadata,
      };
    });
    const rag = await filled(documents);
    const byId = new Map(documents.map((document) => [document.id!, document]));
    const callers: CallerContext[] = [
      {},
      { tenantId: 'acme' },
      { tenantId: 'globex', roles: ['finance'] },
      { roles: ['admin', 'finance'] },
      { tenantId: 'initech', roles: ['support'] },
    ];
    let included = 0;
    for (let round = 0; round < 25; round++) {
      const caller = { ...pick(callers), now: new Date('2026-06-01') };
      const answer = await rag.answer(`refunds case ${Math.floor(random() * 60)} take days`, { caller, topK: 20 });
      for (const section of answer.packet.sections.filter((item) => item.kind === 'retrieved_evidence')) {
        included++;
        const original = byId.get(section.sourceRefs[0])!;
        const decision = checkEligibility(
          { id: original.id!, content: original.content, sourceType: 'manual', sourceName: '', score: 0, metadata: original.metadata ?? {} },
          caller,
        );
        expect(decision.eligible, `${original.id} for ${JSON.stringify(caller)}`).toBe(true);
        if (original.metadata?.redaction === 'pii') expect(section.content).not.toContain('@example.com');
      }
    }
    expect(included).toBeGreaterThan(20);
  });
});

describe('RAG answer contract', () => {
  it('flags answered sentences that cite nothing', async () => {
    const chat = new ScriptedChat(['Refunds take 14 days [1]. They are always paid in cash at the counter.']);
    const rag = await filled([{ content: 'Refunds take 14 days.' }], chat);
    const answer = await rag.answer('How long do refunds take?');
    expect(answer.status).toBe('answered');
    expect(answer.uncitedSentences).toEqual(['They are always paid in cash at the counter.']);
    expect(answer.trace.stages.at(-1)?.warnings).toContain('1 sentence of the answer cite no evidence.');
  });

  it('refuses without calling the model when the guardrail says so', async () => {
    const chat = new ScriptedChat([]);
    const rag = await filled([{ content: 'Refunds take 14 days.' }], chat);
    const answer = await rag.answer('How long do refunds take?', {
      guardrail: ({ question }) => (question.includes('refunds') ? 'refund questions go to a human' : undefined),
    });
    expect(answer).toMatchObject({ status: 'refused', refusal: 'refund questions go to a human', stopReason: 'guardrail', citations: [] });
    expect(chat.calls).toHaveLength(0);
  });

  it('takes the guardrail agentic retrieval takes: a verdict, with the packet and caller to judge', async () => {
    const chat = new ScriptedChat(['Refunds take 14 days [1].']);
    const rag = await filled([{ content: 'Refunds take 14 days.' }], chat);
    const checks: { stage: string; sections: number; tenant?: string }[] = [];
    const blocked = await rag.answer('How long do refunds take?', {
      caller: { tenantId: 'acme' },
      guardrail: ({ stage, packet, caller }) => {
        checks.push({ stage, sections: packet.sections.length, tenant: caller?.tenantId });
        return { action: 'block', reason: 'refund questions go to a human' };
      },
    });
    expect(blocked).toMatchObject({ status: 'refused', refusal: 'refund questions go to a human', stopReason: 'guardrail' });
    expect(checks).toEqual([{ stage: 'context', sections: blocked.packet.sections.length, tenant: 'acme' }]);
    const allowed = await rag.answer('How long do refunds take?', { guardrail: () => ({ action: 'allow' }) });
    expect(allowed.status).toBe('answered');
    expect(chat.calls).toHaveLength(1);
  });

  it('reports a conflict without calling the model', async () => {
    const chat = new ScriptedChat([]);
    const rag = await filled(
      [
        { id: 'a', content: 'The warranty is two years.', sourceName: 'sheet.md', metadata: { facts: { warranty: 2 } } },
        { id: 'b', content: 'The warranty is three years.', sourceName: 'faq.md', metadata: { facts: { warranty: 3 } } },
      ],
      chat,
    );
    const answer = await rag.answer('How long is the warranty?');
    expect(answer.status).toBe('conflicting_evidence');
    expect(answer.citations.map((citation) => citation.id).sort()).toEqual(['a', 'b']);
    expect(answer.text).toMatch(/The sources disagree on "warranty": .* gives "2" \[\d\]; .* gives "3" \[\d\]\./);
    expect(chat.calls).toHaveLength(0);
  });
});

describe('bad options', () => {
  it('are rejected with a code before any work, never a TypeError', async () => {
    const chat = new ScriptedChat([]);
    const rag = await filled([{ content: 'Refunds take 14 days.' }], chat);
    const bad: [unknown, string][] = [
      [{ context: { toolResults: 'not a list' } }, 'CONFIG_INVALID'],
      [{ context: { memories: [{ id: 'm' }] } }, 'CONFIG_INVALID'],
      [{ context: { maxTokens: -1 } }, 'CONFIG_INVALID'],
      [{ context: { maxTokens: 100, reservedForOutput: 100 } }, 'INVALID_OPTION'],
      [{ context: { tokenizer: { name: 'x' } } }, 'CONFIG_INVALID'],
      [{ context: { maxTokenz: 100 } }, 'CONFIG_INVALID'],
      [{ caller: { roles: 'admin' } }, 'INVALID_CALLER'],
      [{ caller: { now: 'yesterday' } }, 'INVALID_CALLER'],
      [{ guardrail: 'no' }, 'INVALID_OPTION'],
      [{ conflictCheck: 'llm' }, 'INVALID_OPTION'],
    ];
    for (const [options, code] of bad) {
      await expect(rag.answer('refunds', options as never), JSON.stringify(options)).rejects.toMatchObject({ code });
    }
    expect(chat.calls).toHaveLength(0);
  });
});

describe('model-based conflict check', () => {
  const documents: DocumentInput[] = [
    { id: 'a', content: 'The X200 warranty lasts two years.', sourceName: 'sheet.md' },
    { id: 'b', content: 'The X200 warranty lasts three years.', sourceName: 'faq.md' },
  ];

  it('asks the model against a schema and reports the conflict it finds, citing both', async () => {
    const chat = new ScriptedChat([
      (call) => {
        const labels = [...call.messages[1].content.matchAll(/<evidence label="(\d+)" source="([^"]+)"/g)].map((match) => ({
          label: Number(match[1]),
          source: match[2],
        }));
        const claims = labels.map((item) => ({ label: item.label, value: item.source === 'sheet.md' ? 'two years' : 'three years' }));
        return `Here: {"conflict": true, "key": "X200 warranty", "claims": ${JSON.stringify(claims)}}`;
      },
    ]);
    const rag = await filled(documents, chat);
    const answer = await rag.answer('How long is the X200 warranty?', { conflictCheck: 'model' });
    expect(answer.status).toBe('conflicting_evidence');
    expect(answer.conflicts).toEqual([
      { kind: 'model', key: 'X200 warranty', refs: expect.arrayContaining(['a', 'b']), values: expect.arrayContaining(['two years', 'three years']) },
    ]);
    expect(answer.citations.map((citation) => citation.id).sort()).toEqual(['a', 'b']);
    expect(chat.calls).toHaveLength(1);
    expect(chat.calls[0].messages[0].content).toContain('Reply with one JSON object');
  });

  it('answers as usual when the model finds no conflict or replies off schema', async () => {
    for (const verdict of [
      '{"conflict": false}',
      'I think they conflict.',
      '{"conflict": true, "key": "x", "claims": [{"label": 1, "value": "a"}, {"label": 9, "value": "b"}]}',
    ]) {
      const chat = new ScriptedChat([verdict, 'The warranty lasts two years [1].']);
      const rag = await filled(documents, chat);
      const answer = await rag.answer('How long is the X200 warranty?', { conflictCheck: 'model' });
      expect(answer.status, verdict).toBe('answered');
      expect(chat.calls).toHaveLength(2);
      if (!verdict.includes('false')) expect(answer.trace.stages.at(-1)?.warnings.some((warning) => warning.includes('did not fit its schema'))).toBe(true);
    }
  });

  it('is not asked by default', async () => {
    const chat = new ScriptedChat(['The warranty lasts two years [1].']);
    const rag = await filled(documents, chat);
    expect((await rag.answer('How long is the X200 warranty?')).status).toBe('answered');
    expect(chat.calls).toHaveLength(1);
  });
});

describe('stored traces', () => {
  it('store the packet that renders to exactly the messages the model received, and no unredacted text', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-trace-'));
    directories.push(directory);
    const chat = new ScriptedChat(['Write to the duty manager [1].']);
    const rag = await filled([{ id: 'p', content: 'Escalations go to jane.doe@example.com, the duty manager.', metadata: { redaction: 'pii' } }], chat);
    const store = new JsonlTraceStore(directory);
    const answer = await rag.answer('Where do escalations go?', {
      caller: { tenantId: 'acme', roles: ['support'], now: new Date('2026-06-01') },
      traceStore: store,
      pipelineVersion: { configHash: 'abc123' },
    });
    // A pipeline run: the store also keeps agentic runs, which have no packet.
    const stored = (await store.get(answer.trace.runId.slice(0, 6))) as StoredTrace;
    expect(renderMessages(stored.packet)).toEqual(chat.calls[0].messages);
    expect(stored.packet).toEqual(answer.packet);
    expect(stored.caller).toEqual({ tenantId: 'acme', roles: ['support'], now: '2026-06-01T00:00:00.000Z' });
    expect(stored.version).toMatchObject({
      configHash: 'abc123',
      embedding: { name: 'local-hash-embeddings' },
      chat: { name: 'scripted-chat' },
      tokenizer: 'axon-estimate@1',
    });
    expect(stored.retrieved.map((item) => item.id)).toEqual(['p']);
    expect(stored.status).toBe('answered');
    expect(await readFile(store.file, 'utf8')).not.toContain('jane.doe@example.com');
  });

  it('change version when the pipeline changes', async () => {
    const one = await filled([{ content: 'x y z' }]);
    const version = one.pipelineVersion({ policyVersion: 'p', tokenizer: 't' });
    expect(version.citationRules).toMatch(/^[0-9a-f]{16}$/);
    const withChat = await filled([{ content: 'x y z' }], new ScriptedChat([]));
    expect(withChat.pipelineVersion({ policyVersion: 'p', tokenizer: 't' })).not.toEqual(version);
  });
});
