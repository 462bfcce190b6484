// A consumer's application in plain JavaScript: subclass RAG with a FileStore, a custom post-processor and
// AdaptiveThreshold, add documents, answer offline, print the citations. Run by scripts/consumer-check.sh.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RAG } from 'axon-rag';
import { LocalHashEmbeddings } from 'axon-rag/providers';
import { AdaptiveThreshold } from 'axon-rag/processors';
import { FileStore } from 'axon-rag/stores';

/** Drops documents from a blocked source, recording why in the trace. */
class BlockSource {
  name = 'block-source';
  constructor(blocked) {
    this.blocked = blocked;
  }
  async process(_question, documents, context) {
    return documents.filter((document) => {
      if (document.sourceName !== this.blocked) return true;
      context.drop(document.id, `source ${this.blocked} is blocked`);
      return false;
    });
  }
}

const directory = mkdtempSync(join(tmpdir(), 'axon-consumer-'));
class SupportBot extends RAG {
  embeddings() {
    return new LocalHashEmbeddings();
  }
  vectorStore() {
    return new FileStore({ directory, topK: 50 });
  }
  postProcessors() {
    return [new BlockSource('internal.md'), new AdaptiveThreshold({ multiplier: 0.6 })];
  }
}

const bot = new SupportBot();
try {
  await bot.addDocuments([
    { content: 'Passwords are reset from Settings, then Security, then Reset password.', sourceType: 'file', sourceName: 'help.md' },
    { content: 'Internal: password resets are logged in the audit table.', sourceType: 'file', sourceName: 'internal.md' },
    { content: 'Invoices are sent on the first day of each month.', sourceType: 'file', sourceName: 'billing.md' },
  ]);
  const answer = await bot.answer('How do I reset my password?');
  const cited = answer.citations.map((citation) => citation.sourceName);
  const dropped = answer.trace.stages.flatMap((stage) => stage.dropped.map((entry) => entry.reason));
  if (!cited.includes('help.md') || cited.includes('internal.md')) throw new Error(`unexpected citations: ${JSON.stringify(cited)}`);
  if (!dropped.some((reason) => reason.includes('internal.md is blocked'))) throw new Error('the custom post-processor left no reason in the trace');
  console.log(`answer: ${answer.text}`);
  console.log(`citations: ${cited.join(', ')}`);
  console.log('consumer app: ok');
} finally {
  await bot.close();
  rmSync(directory, { recursive: true, force: true });
}
