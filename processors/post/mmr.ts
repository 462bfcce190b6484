import { z } from 'zod';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { RunContext } from '../../src/contracts/run-context.ts';
import type { Document } from '../../src/document.ts';
import { throwIfAborted } from '../../src/errors.ts';
import { describeUnselected, maximalMarginalRelevance } from '../../src/pipeline/mmr.ts';
import { parseOptions } from '../../src/runtime/options.ts';

export const mmrOptionsSchema = z
  .object({
    /** How many documents to keep. Fewer come out when fewer come in. @default 5 */
    k: z.number().int().positive().default(5),
    /**
     * Relevance against diversity, in [0, 1]: 1 keeps the `k` most relevant (plain top-k), 0 picks the most
     * mutually different documents, 0.5 balances the two. @default 0.5
     */
    lambda: z.number().min(0).max(1).default(0.5),
  })
  .strict();

export type MMROptions = z.input<typeof mmrOptionsSchema>;

const NAME = 'mmr';

/**
 * Maximal marginal relevance: re-selects `k` documents, trading each one's relevance (its incoming score)
 * against its similarity to the documents already selected, so near-duplicates do not fill the context.
 * Needs the documents' embeddings (vector stores return them).
 *
 * The output is in selection order and each document's `score` becomes its MMR score,
 * `lambda × relevance − (1 − lambda) × redundancy`, which never increases along the selection; a later stage
 * that sorts by score therefore keeps the diversified order. The previous stage's scores stay in the trace.
 *
 * @example
 * protected postProcessors() { return [new AdaptiveThreshold(), new MMR({ k: 5, lambda: 0.5 })]; }
 */
export class MMR implements PostProcessor {
  readonly name = NAME;
  readonly k: number;
  readonly lambda: number;

  constructor(options: MMROptions = {}) {
    const parsed = parseOptions(mmrOptionsSchema, options, NAME);
    this.k = parsed.k;
    this.lambda = parsed.lambda;
  }

  /** @throws AxonError `MISSING_EMBEDDINGS` when a document has no embedding */
  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    throwIfAborted(context.signal, this.name);
    const { selected, unselected } = maximalMarginalRelevance(documents, { k: this.k, lambda: this.lambda, component: NAME });
    for (const item of unselected) {
      const { reason, keptId } = describeUnselected(item, { k: this.k, lambda: this.lambda });
      context.drop(item.document.id, reason, { keptId });
    }
    return selected.map(({ document, score }) => ({ ...document, score }));
  }
}
