import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdaptiveThreshold } from '../../../processors/post/adaptive-threshold.ts';
import { MMR } from '../../../processors/post/mmr.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { JsonlTraceStore } from '../../../src/context/trace-store.ts';
import type { DocumentInput } from '../../../src/document.ts';
import { RAG, type SearchMode } from '../../../src/rag.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { afterAll } from 'vitest';
import { callKind } from '../../agentic/fixtures.ts';
import { ScriptedChat } from '../../helpers/scripted-chat.ts';

/** A small help-desk corpus: one chunk carries an e-mail address (pii) and one is secret, so tests can check neither leaks. */
export const CORPUS: DocumentInput[] = [
  {
    content: 'To reset your password, open Settings, then Security, then choose Reset password.',
    sourceType: 'file',
    sourceName: 'help/account.md',
    metadata: { chunkIndex: 0, pageNumber: 3 },
  },
  {
    content: 'Password resets send a confirmation link; write to alice.admin@example.com if the password link never arrives.',
    sourceType: 'file',
    sourceName: 'help/contacts.md',
    metadata: { chunkIndex: 0, redaction: 'pii' },
  },
  {
    content: 'The password of the break-glass account is SECRET-ZEBRA-42.',
    sourceType: 'file',
    sourceName: 'ops/vault.md',
    metadata: { chunkIndex: 0, redaction: 'secret' },
  },
  {
    content: 'Invoices are issued monthly and can be downloaded from the Billing page.',
    sourceType: 'file',
    sourceName: 'help/billing.md',
    metadata: { chunkIndex: 0 },
  },
  {
    content: 'Refunds for duplicate charges are processed within five business days.',
    sourceType: 'file',
    sourceName: 'help/billing.md',
    metadata: { chunkIndex: 1 },
  },
  {
    content: 'Two-factor authentication protects your account with a code from your phone.',
    sourceType: 'file',
    sourceName: 'help/account.md',
    metadata: { chunkIndex: 1, pageNumber: 4 },
  },
  { content: 'The office kitchen is cleaned every Friday afternoon.', sourceType: 'file', sourceName: 'misc/office.md', metadata: { chunkIndex: 0 } },
];

/** The sub-query the scripted model plans in an agentic run. */
export const SUB_QUERY = 'reset password in Settings Security';

/** A follow-up the scripted model rewrites, in a conversation, into `FOLLOW_UP_SEARCHED`. */
export const FOLLOW_UP = 'And how long does it take?';
export const FOLLOW_UP_SEARCHED = 'How long does a password reset take?';

/** What the scripted model answers, citing the first evidence. */
export const ANSWER = 'Open Settings, then Security, and choose Reset password [1].';

/** The runs of three or more words ANSWER shares with the chunk it cites (help/account.md, page 3). */
export const CITED_SPANS = ['open Settings, then Security', 'choose Reset password'];

class FixtureRAG extends RAG {
  constructor(private readonly chatModel: ScriptedChat) {
    super();
  }
  private readonly store = new MemoryStore();
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
  // MMR reorders what the threshold kept (on this corpus it swaps ranks 2 and 3 for the password question), so
  // the page has a reranker's moves to draw.
  protected postProcessors() {
    return [new AdaptiveThreshold(), new MMR({ k: 4, lambda: 0.7 })];
  }
  protected chat() {
    return this.chatModel;
  }
  protected searchMode(): SearchMode {
    return 'vector';
  }
  // Equal weights when a test asks for hybrid (the local embedder's default is BM25-led), so fusion keeps the
  // order the rank-change test expects MMR to rework.
  protected hybridWeights() {
    return { vector: 1, keyword: 1 };
  }
}

/** The trace folders the fixtures made, removed once the test file that imported this module has run. */
const traceDirectories: string[] = [];
try {
  afterAll(async () => {
    for (const directory of traceDirectories.splice(0)) await rm(directory, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
} catch {
  // Imported outside a test file's collection (a serve worker thread builds its pipeline from this module): the
  // test that started the worker owns the folders it uses.
}

/** The fixture pipeline, filled, with a trace store in a fresh temporary folder. */
export async function fixturePipeline(): Promise<{ rag: RAG; traceStore: JsonlTraceStore; directory: string; chat: ScriptedChat }> {
  // One model for both kinds of run: the agentic retriever's planning and sufficiency calls get JSON, answers get ANSWER.
  const chat = new ScriptedChat(
    (call) => {
      const kind = callKind(call);
      if (kind === 'plan') return JSON.stringify({ subQueries: [{ query: SUB_QUERY, retriever: 'documents' }] });
      if (kind === 'sufficiency') return JSON.stringify({ sufficient: true, missing: '' });
      // A follow-up in a conversation: the one the tests ask is rewritten, any other question stands alone.
      if (call.messages[0]?.content.startsWith("Rewrite the user's latest question")) {
        const question = /<question>\n([\s\S]*?)\n<\/question>/.exec(call.prompt)?.[1] ?? '';
        return question === FOLLOW_UP ? FOLLOW_UP_SEARCHED : question;
      }
      return ANSWER;
    },
    { chunkSize: 5 },
  );
  const rag = new FixtureRAG(chat);
  await rag.addDocuments(CORPUS);
  const directory = await mkdtemp(join(tmpdir(), 'axon-serve-'));
  traceDirectories.push(directory);
  return { rag, traceStore: new JsonlTraceStore(directory), directory, chat };
}

/** The events of a server-sent event stream, parsed. */
export function parseEvents(text: string): { event: string; data: unknown }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1] ?? '', data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') }));
}
