import { z } from 'zod';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { RunContext } from '../../src/contracts/run-context.ts';
import type { Document } from '../../src/document.ts';
import { throwIfAborted } from '../../src/errors.ts';
import { parseOptions } from '../../src/runtime/options.ts';

export const topNOptionsSchema = z
  .object({
    /** How many documents to keep, from the front of the list. @default 5 */
    n: z.number().int().positive().default(5),
  })
  .strict();

export type TopNOptions = z.input<typeof topNOptionsSchema>;

const NAME = 'top-n';

/** Keeps the first `n` documents in their current order (the order the previous stage chose). */
export class TopN implements PostProcessor {
  readonly name = NAME;
  readonly n: number;

  constructor(options: TopNOptions = {}) {
    this.n = parseOptions(topNOptionsSchema, options, NAME).n;
  }

  async process(_question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    throwIfAborted(context.signal, this.name);
    for (const document of documents.slice(this.n)) context.drop(document.id, `beyond the first ${this.n}`);
    return documents.slice(0, this.n);
  }
}
