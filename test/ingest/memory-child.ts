/**
 * Child process for memory-bounds.test.ts: ingests one file into a store that keeps nothing (it counts what it
 * is given), with an embedder that keeps nothing either (the test fake records every text), so the peak resident set size the parent reads is what
 * ingestion itself holds. Prints the summary as JSON. Run: tsx memory-child.ts <file> [options JSON]
 */
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import type { Document } from '../../src/document.ts';
import { ingestPaths } from '../../src/ingest/index.ts';

const [file, optionsJson] = process.argv.slice(2);

/** Stores nothing: counts the documents and characters it was given. */
class CountingStore implements VectorStore {
  readonly name = 'counting-store';
  readonly topK = 50;
  documents = 0;
  characters = 0;
  async add(documents: Document[]): Promise<void> {
    this.documents += documents.length;
    for (const document of documents) this.characters += document.content.length;
  }
  async search(): Promise<Document[]> {
    return [];
  }
  async deleteBySource(): Promise<number> {
    return 0;
  }
  async getByIds(): Promise<Document[]> {
    return [];
  }
  async getBySource(): Promise<Document[]> {
    return [];
  }
  async count(): Promise<number> {
    return this.documents;
  }
}

/** A vector from a text's length and first letter: enough for ingestion, and nothing is remembered. */
class ForgetfulEmbeddings implements EmbeddingsProvider {
  readonly name = 'forgetful-embeddings';
  readonly dimensions = 4;
  readonly maxBatchSize = 256;
  readonly maxParallelCalls = 2;
  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => [1, text.length % 97, text.charCodeAt(0) || 0, 1]);
  }
}

const store = new CountingStore();
const summary = await ingestPaths([file], { embeddings: new ForgetfulEmbeddings(), store }, { ...(optionsJson ? JSON.parse(optionsJson) : {}) });
process.stdout.write(`${JSON.stringify({ summary, stored: { documents: store.documents, characters: store.characters } })}\n`);
