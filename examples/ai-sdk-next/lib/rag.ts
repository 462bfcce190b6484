// The pipeline behind the page: Axon's retrieval, with an AI SDK model (any @ai-sdk provider) as its chat model.
// In an application, import from 'axon-rag', 'axon-rag/stores', 'axon-rag/providers' and 'axon-rag/ai-sdk'.
import { openai } from '@ai-sdk/openai';
import { AISdkChat } from '../../../providers/ai-sdk/index.ts';
import { LocalHashEmbeddings } from '../../../providers/index.ts';
import { RAG } from '../../../src/index.ts';
import { FileStore } from '../../../stores/index.ts';

/** Answers from the documents `axon ingest` put in `.axon/` (run it first), with GPT through the AI SDK. */
export class DocsRag extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new FileStore({ directory: '.axon' });
  }
  protected chat() {
    // The AI SDK in: any LanguageModel (V2 of ai 5, V3 of ai 6, V4 of ai 7) becomes Axon's chat provider.
    return new AISdkChat(openai('gpt-4o-mini'), { maxTokens: 600 });
  }
}

/** One pipeline for the server's lifetime: the store is opened once. */
export const rag = new DocsRag();
