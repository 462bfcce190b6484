import { z } from 'zod';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { RunContext } from '../../src/contracts/run-context.ts';
import type { Document } from '../../src/document.ts';
import { throwIfAborted } from '../../src/errors.ts';
import { parseOptions } from '../../src/runtime/options.ts';

export const adaptiveThresholdOptionsSchema = z
  .object({
    /**
     * How many median absolute deviations below the median the cut sits. 0.2–0.4 favours precision,
     * 0.5–0.7 is balanced, 0.8–1.0 favours recall, above 1.0 keeps almost everything. Negative values are
     * refused: they would put the cut above the median and drop more than half of every result set.
     * @default 0.6
     */
    multiplier: z.number().finite().min(0, { message: 'must be ≥ 0 (a negative multiplier cuts above the median)' }).default(0.6),
  })
  .strict();

export type AdaptiveThresholdOptions = z.input<typeof adaptiveThresholdOptionsSchema>;

/** Below this spread the scores are treated as identical and everything is kept. */
const FLAT_SPREAD = 1e-4;
const NAME = 'adaptive-threshold';

/**
 * A robust cut computed from the current result set's own scores, so it works on any scale:
 * `threshold = max(0, median − multiplier × MAD)`, where MAD is the (unscaled) median absolute deviation.
 * Fewer than two documents, or a MAD of at most 1e-4, keep everything.
 */
export class AdaptiveThreshold implements PostProcessor {
  readonly name = NAME;
  readonly multiplier: number;

  constructor(options: AdaptiveThresholdOptions = {}) {
    this.multiplier = parseOptions(adaptiveThresholdOptionsSchema, options, NAME).multiplier;
  }

  /** The cut for a set of scores, or `undefined` when every document is kept. */
  thresholdFor(scores: number[]): { threshold: number; median: number; mad: number } | undefined {
    if (scores.length < 2) return undefined;
    const center = median(scores);
    const mad = median(scores.map((score) => Math.abs(score - center)));
    if (mad <= FLAT_SPREAD) return undefined;
    return { threshold: Math.max(0, center - this.multiplier * mad), median: center, mad };
  }

  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    throwIfAborted(context.signal, this.name);
    const cut = this.thresholdFor(documents.map((document) => document.score));
    if (cut === undefined) return documents;
    const { threshold, median: center, mad } = cut;
    return documents.filter((document) => {
      const keep = document.score >= threshold;
      if (!keep) {
        context.drop(
          document.id,
          `score ${document.score.toFixed(4)} < adaptive threshold ${threshold.toFixed(4)} (median ${center.toFixed(4)} − ${this.multiplier} × MAD ${mad.toFixed(4)})`,
        );
      }
      return keep;
    });
  }
}

// --- Internal helpers ---

/** Median; the mean of the two middle values for an even count. */
function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
