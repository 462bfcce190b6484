import { z } from 'zod';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { RunContext } from '../../src/contracts/run-context.ts';
import type { Document } from '../../src/document.ts';
import { throwIfAborted } from '../../src/errors.ts';
import { deduplicate, describeRemoval } from '../../src/pipeline/dedupe.ts';
import { parseOptions } from '../../src/runtime/options.ts';

export const dedupeOptionsSchema = z.object({}).strict();

export type DedupeOptions = z.input<typeof dedupeOptionsSchema>;

const NAME = 'dedupe';

/**
 * Removes documents repeated by id, then by normalised content, keeping the first and the best score.
 * The pipeline already de-duplicates after search; use this after a post-processor that adds documents.
 */
export class Dedupe implements PostProcessor {
  readonly name = NAME;

  constructor(options: DedupeOptions = {}) {
    parseOptions(dedupeOptionsSchema, options, NAME);
  }

  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    throwIfAborted(context.signal, this.name);
    const result = deduplicate(documents);
    for (const removed of result.removed) {
      const { reason, keptId } = describeRemoval(removed);
      context.drop(removed.id, reason, { keptId });
    }
    return result.documents;
  }
}
