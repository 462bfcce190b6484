// The consumer application in TypeScript, type-checked by the application's own tsc (strict, nodenext,
// skipLibCheck false) against the installed package's declarations. Run by scripts/consumer-check.sh.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxonError, RAG, type Answer, type Document, type PostProcessor, type RunContext } from 'axon-rag';
import { createRag, type PipelineConfig } from 'axon-rag/config';
import { LocalHashEmbeddings } from 'axon-rag/providers';
import { AdaptiveThreshold } from 'axon-rag/processors';
import { FileStore } from 'axon-rag/stores';

class BlockSource implements PostProcessor {
  readonly name = 'block-source';
  constructor(private readonly blocked: string) {}
  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    return documents.filter((document) => {
      if (document.sourceName !== this.blocked) return true;
      context.drop(document.id, `source ${this.blocked} is blocked`);
      return false;
    });
  }
}

const directory = mkdtempSync(join(tmpdir(), 'axon-consumer-ts-'));
class SupportBot extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new FileStore({ directory, topK: 50 });
  }
  protected postProcessors(): PostProcessor[] {
    return [new BlockSource('internal.md'), new AdaptiveThreshold({ multiplier: 0.6 })];
  }
}

const bot = new SupportBot();
await bot.addDocuments([{ content: 'Passwords are reset from Settings, then Security.', sourceType: 'file', sourceName: 'help.md' }]);
const answer: Answer = await bot.answer('How do I reset my password?');
const sources: string[] = answer.citations.map((citation) => citation.sourceName);
console.log(sources);
await bot.close();

const config: PipelineConfig = { store: { type: 'memory' }, postProcessors: [{ type: 'top-n', n: 3 }] };
const configured = await createRag(config);
try {
  await configured.answer('');
} catch (error) {
  if (AxonError.isInstance(error)) console.log(error.code);
}
rmSync(directory, { recursive: true, force: true });
