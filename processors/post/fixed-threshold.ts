import { z } from 'zod';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { RunContext } from '../../src/contracts/run-context.ts';
import type { Document } from '../../src/document.ts';
import { throwIfAborted } from '../../src/errors.ts';
import { parseOptions } from '../../src/runtime/options.ts';

export const fixedThresholdOptionsSchema = z
  .object({
    /**
     * Keep documents whose current score is at least this. Only meaningful on a known scale: after vector
     * search it is cosine similarity (-1 to 1); after a reranker it is that reranker's relevance (0 to 1).
     * @default 0.5
     */
    threshold: z.number().finite().default(0.5),
  })
  .strict();

export type FixedThresholdOptions = z.input<typeof fixedThresholdOptionsSchema>;

const NAME = 'fixed-threshold';

/** Keeps documents with `score >= threshold`, in their incoming order. */
export class FixedThreshold implements PostProcessor {
  readonly name = NAME;
  readonly threshold: number;

  constructor(options: FixedThresholdOptions = {}) {
    this.threshold = parseOptions(fixedThresholdOptionsSchema, options, NAME).threshold;
  }

  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    throwIfAborted(context.signal, this.name);
    return documents.filter((document) => {
      const keep = document.score >= this.threshold;
      if (!keep) context.drop(document.id, `score ${formatScore(document.score)} < threshold ${this.threshold}`);
      return keep;
    });
  }
}

// --- Internal helpers ---

function formatScore(score: number): string {
  return score.toFixed(4);
}
