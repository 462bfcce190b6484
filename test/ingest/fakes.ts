import type { EmbedOptions, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';

/**
 * A deterministic embedder for ingestion tests: letter frequencies plus a constant, so every text gets a
 * valid non-zero vector. Records every batch it was asked for, and can be told to fail.
 */
export class FakeEmbeddings implements EmbeddingsProvider {
  readonly name = 'fake-embeddings';
  readonly dimensions = 27;
  readonly calls: string[][] = [];
  /** Throw on any batch holding a text that contains this string. */
  failOn: string | undefined;

  constructor(
    readonly maxBatchSize = 16,
    readonly maxParallelCalls = 2,
  ) {}

  async embed(texts: string[], _options: EmbedOptions): Promise<number[][]> {
    this.calls.push([...texts]);
    if (this.failOn !== undefined && texts.some((text) => text.includes(this.failOn!))) throw new Error('fake provider refused the batch');
    return texts.map((text) => {
      const vector = new Array<number>(27).fill(0);
      for (const character of text.toLowerCase()) {
        const code = character.charCodeAt(0) - 97;
        if (code >= 0 && code < 26) vector[code] += 1;
      }
      vector[26] = 1;
      return vector;
    });
  }

  get textsEmbedded(): number {
    return this.calls.reduce((total, batch) => total + batch.length, 0);
  }
}
