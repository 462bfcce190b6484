// Build a pipeline by subclassing RAG: choose the embedder, the store and the post-processors.
// Run: npx tsx examples/subclassing.ts (it imports axon-rag by name, as an application does)
import { formatCitation, RAG } from 'axon-rag';
import { AdaptiveThreshold, TopN } from 'axon-rag/processors';
import { LocalHashEmbeddings } from 'axon-rag/providers';
import { MemoryStore } from 'axon-rag/stores';

class HelpDesk extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore({ topK: 50 });
  }
  protected postProcessors() {
    return [new AdaptiveThreshold({ multiplier: 0.6 }), new TopN({ n: 3 })];
  }
}

const desk = new HelpDesk();
await desk.addDocuments([
  {
    content: 'To reset your password, open Settings, choose Security, then Reset password. A link arrives by e-mail within five minutes.',
    sourceType: 'file',
    sourceName: 'help/account.md',
    metadata: { chunkIndex: 0 },
  },
  {
    content: 'Invoices are issued on the first day of each month and can be downloaded as PDF from the Billing page.',
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
]);

const answer = await desk.answer('How do I reset my password?');
console.log(answer.text);
for (const citation of answer.citations) console.log(`[${citation.label}] ${formatCitation(citation)}`);
for (const stage of answer.trace.stages) console.log(`${stage.stage} ${stage.name}: ${stage.inputIds.length} → ${stage.outputIds.length}`);
