import { z } from 'zod';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { Reranker } from '../../src/contracts/reranker.ts';
import type { RunContext } from '../../src/contracts/run-context.ts';
import type { Document } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { chunk, mapWithConcurrency } from '../../src/runtime/concurrency.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { rerankResultsFromResponse } from '../../src/runtime/provider-responses.ts';
import { resolveApiKey, type ApiKeyInput } from '../../src/runtime/secret.ts';

/** Options every reranker post-processor shares; spread into the Jina, Cohere and LocalAI schemas. */
export const rerankerSettingsShape = {
  /** How many documents to keep, best first. @default 3 */
  topN: z.number().int().min(1).max(10_000).default(3),
  /**
   * What a failed reranking does. `fail` stops the run with the provider's error. `keep-order` keeps the
   * incoming order cut to `topN`, leaves scores untouched, and records a warning in the trace.
   * @default fail
   */
  onError: z.enum(['fail', 'keep-order']).default('fail'),
  /** Batches sent at once when the list is longer than the service accepts in one call. @default 2 */
  maxParallelCalls: z.number().int().min(1).max(16).default(2),
};

export const rerankerPostProcessorOptionsSchema = z
  .object({
    /** The relevance model to call. */
    reranker: z.custom<Reranker>(isReranker, { message: 'must implement Reranker (name, maxDocumentsPerCall, rerank)' }),
    /** Name shown in the trace. @default reranker */
    name: z.string().min(1).default('reranker'),
    ...rerankerSettingsShape,
  })
  .strict();

export type RerankerPostProcessorOptions = z.input<typeof rerankerPostProcessorOptionsSchema>;

/**
 * Reorders the documents by a `Reranker`'s relevance to the user's question and keeps the best `topN`.
 *
 * Long lists are split into batches of the reranker's `maxDocumentsPerCall`; each batch returns its own best
 * `topN`, and the batches are merged by relevance score (a cross-encoder scores each document against the query
 * alone, so scores from different batches compare). Results are mapped back by index; each kept document's
 * `score` becomes its relevance score; every document left out is recorded as dropped.
 *
 * The Jina, Cohere and LocalAI rerankers (`JinaReranker`, … in `axon-rag/processors`) are this class with a
 * provider's relevance model built in: `new RerankerPostProcessor({ reranker: new CohereRerankModel(), topN: 5 })`.
 */
export class RerankerPostProcessor implements PostProcessor {
  readonly name: string;
  readonly reranker: Reranker;
  readonly topN: number;
  readonly onError: 'fail' | 'keep-order';
  readonly maxParallelCalls: number;

  constructor(options: RerankerPostProcessorOptions) {
    const parsed = parseOptions(rerankerPostProcessorOptionsSchema, options, options?.name ?? 'reranker');
    this.name = parsed.name;
    this.reranker = parsed.reranker;
    this.topN = parsed.topN;
    this.onError = parsed.onError;
    this.maxParallelCalls = parsed.maxParallelCalls;
  }

  /**
   * @throws ProviderError from the reranker when `onError` is `fail`.
   * @throws AxonError `ABORTED` when the run is cancelled, whatever `onError` says.
   */
  async process(question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    if (documents.length === 0) return [];
    let ranked: Array<{ document: Document; score: number }>;
    try {
      ranked = await this.#rank(context.usage?.reranker(this.reranker) ?? this.reranker, question, documents, context.signal);
    } catch (error) {
      if (this.onError === 'fail' || isCancellation(error, context.signal)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      context.warn(`${this.reranker.name} failed, so the incoming order was kept (top ${this.topN}): ${reason}`);
      const kept = documents.slice(0, this.topN);
      for (const document of documents.slice(this.topN)) context.drop(document.id, `below top ${this.topN} (reranking failed; incoming order kept)`);
      return kept;
    }
    const kept = ranked.slice(0, this.topN);
    const keptDocuments = new Set(kept.map((entry) => entry.document));
    for (const document of documents) {
      if (!keptDocuments.has(document)) context.drop(document.id, `below top ${this.topN} after reranking`);
    }
    return kept.map(({ document, score }) => ({ ...document, score }));
  }

  /** Every returned document with its relevance, best first; ties keep the incoming order. */
  async #rank(
    reranker: Reranker,
    question: string,
    documents: Document[],
    signal: AbortSignal | undefined,
  ): Promise<Array<{ document: Document; score: number }>> {
    const limit = Math.max(1, Math.floor(reranker.maxDocumentsPerCall));
    const batches = chunk(
      documents.map((document, position) => ({ document, position })),
      limit,
    );
    const scored = await mapWithConcurrency(
      batches,
      this.maxParallelCalls,
      async (batch) => {
        const topN = Math.min(this.topN, batch.length);
        const results = await reranker.rerank(
          question,
          batch.map((entry) => entry.document.content),
          { topN, signal },
        );
        // Checked again here because any Reranker can be plugged in, not only the validated built-in ones.
        const valid = rerankResultsFromResponse(reranker.name, undefined, results, {
          documentCount: batch.length,
          topN,
          scoreField: 'relevanceScore',
          path: 'rerank()',
        });
        return valid.map((result) => ({ ...batch[result.index], score: result.relevanceScore }));
      },
      { signal, component: this.name },
    );
    return scored.flat().sort((left, right) => right.score - left.score || left.position - right.position);
  }
}

type RerankerSettings = z.output<z.ZodObject<typeof rerankerSettingsShape>>;

/** What a post-processor with a built-in relevance model is made of: see `defineRerankerPostProcessor`. */
export interface RerankerPostProcessorDefinition<ModelShape extends z.ZodRawShape> {
  /** Name shown in the trace and in errors, e.g. `cohere-reranker`. */
  name: string;
  /** The model's options schema; the post-processor's schema adds `topN`, `onError` and `maxParallelCalls`. */
  modelOptionsSchema: z.ZodObject<ModelShape>;
  /** Resolve `apiKey` from this variable at construction, failing with `MISSING_API_KEY` under the post-processor's name. */
  apiKeyVariable?: string;
  /** Build the relevance model from its parsed options (with `apiKey` resolved when `apiKeyVariable` is set). */
  createModel(options: z.output<z.ZodObject<ModelShape>>): Reranker;
}

/**
 * The schema and class of a post-processor that reranks with one built-in relevance model: the Jina, Cohere
 * and LocalAI rerankers are each one call of this (made where both families are known, the composition root).
 *
 * @example
 * const cohere = defineRerankerPostProcessor({ name: 'cohere-reranker', modelOptionsSchema: cohereRerankModelOptionsSchema,
 *   apiKeyVariable: 'COHERE_API_KEY', createModel: (options) => new CohereRerankModel(options) });
 * export class CohereReranker extends cohere.Processor {}
 */
export function defineRerankerPostProcessor<ModelShape extends z.ZodRawShape>(definition: RerankerPostProcessorDefinition<ModelShape>) {
  const schema = definition.modelOptionsSchema.extend(rerankerSettingsShape).strict();
  type Options = z.input<typeof schema>;
  class Processor extends RerankerPostProcessor {
    constructor(options: Options = {} as Options) {
      // The generic shape defeats inference here; the concrete schemas are checked where each post-processor is defined.
      const parsed = parseOptions(schema, options, definition.name) as unknown as RerankerSettings & Record<string, unknown>;
      const { topN, onError, maxParallelCalls, ...modelOptions } = parsed;
      if (definition.apiKeyVariable !== undefined) {
        modelOptions.apiKey = resolveApiKey(modelOptions.apiKey as ApiKeyInput | undefined, {
          component: definition.name,
          environmentVariable: definition.apiKeyVariable,
        });
      }
      super({
        name: definition.name,
        reranker: definition.createModel(modelOptions as unknown as z.output<z.ZodObject<ModelShape>>),
        topN,
        onError,
        maxParallelCalls,
      });
    }
  }
  return { schema, Processor };
}

// --- Internal helpers ---

function isReranker(value: unknown): value is Reranker {
  const candidate = value as Partial<Reranker> | null;
  return (
    !!candidate &&
    typeof candidate.name === 'string' &&
    typeof candidate.rerank === 'function' &&
    typeof candidate.maxDocumentsPerCall === 'number' &&
    candidate.maxDocumentsPerCall >= 1
  );
}

function isCancellation(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (AxonError.isInstance(error) && error.code === 'ABORTED');
}
