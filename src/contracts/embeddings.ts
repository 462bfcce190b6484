import type { Vector } from '../document.ts';

/** Some services embed a search query differently from a stored document (Cohere's input types). */
export type EmbeddingInputType = 'query' | 'document';

export interface EmbedOptions {
  inputType: EmbeddingInputType;
  signal?: AbortSignal;
}

/**
 * Turns texts into vectors. The capability fields let the core batch and parallelise in one place
 * (`src/runtime/`); `embed` itself is called with at most `maxBatchSize` texts.
 */
export interface EmbeddingsProvider {
  /** Short name shown in the trace and in errors, e.g. `openai-embeddings`. */
  readonly name: string;
  /** Length of every vector returned; `undefined` when only known after the first call. */
  readonly dimensions: number | undefined;
  /** Most texts one `embed` call accepts. */
  readonly maxBatchSize: number;
  /** How many `embed` calls may run at once. 1 means calls are made one after another. */
  readonly maxParallelCalls: number;
  /** One vector per text, in the same order. */
  embed(texts: string[], options: EmbedOptions): Promise<Vector[]>;
}
