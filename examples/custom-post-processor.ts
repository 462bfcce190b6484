// Write your own post-processor: a class with a name and process(question, documents, context).
// This one drops documents from sources the caller may not see, and boosts an official source.
// Run: npx tsx examples/custom-post-processor.ts (it imports axon-rag by name, as an application does)
import { RAG, type Document, type PostProcessor, type RunContext } from 'axon-rag';
import { TopN } from 'axon-rag/processors';
import { LocalHashEmbeddings } from 'axon-rag/providers';
import { MemoryStore } from 'axon-rag/stores';

class SourcePolicy implements PostProcessor {
  readonly name = 'source-policy';

  constructor(private readonly options: { blocked: string[]; boosted: string; boost: number }) {}

  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    const allowed = documents.filter((document) => {
      const blocked = this.options.blocked.some((prefix) => document.sourceName.startsWith(prefix));
      if (blocked) context.drop(document.id, `source ${document.sourceName} is not allowed`);
      return !blocked;
    });
    if (allowed.length === 0) context.warn('Every document came from a blocked source.');
    return allowed
      .map((document) => (document.sourceName === this.options.boosted ? { ...document, score: document.score * this.options.boost } : document))
      .sort((a, b) => b.score - a.score);
  }
}

class PolicyBot extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
  protected postProcessors() {
    return [new SourcePolicy({ blocked: ['internal/'], boosted: 'handbook.md', boost: 1.5 }), new TopN({ n: 2 })];
  }
}

const bot = new PolicyBot();
await bot.addDocuments([
  { content: 'Holiday requests are approved by your manager in the HR portal.', sourceName: 'handbook.md', sourceType: 'file' },
  { content: 'Holiday requests: the HR portal queue is reviewed on Mondays.', sourceName: 'internal/hr-runbook.md', sourceType: 'file' },
  { content: 'Holiday requests made by e-mail are also accepted during outages.', sourceName: 'faq.md', sourceType: 'file' },
]);

const { documents, trace } = await bot.retrieve('How are holiday requests approved?');
console.log('kept:', documents.map((document) => `${document.sourceName} (${document.score.toFixed(3)})`).join(', '));
const policy = trace.stages.find((stage) => stage.name === 'source-policy');
// The trace names each document it saw by source and chunk (`sources`); the id is the fallback.
for (const dropped of policy?.dropped ?? []) console.log(`dropped ${trace.sources?.[dropped.id] ?? dropped.id}: ${dropped.reason}`);
