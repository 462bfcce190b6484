import type { Document } from '../document.ts';
import type { RunContext } from './run-context.ts';

/**
 * Reorders, rescores or filters the retrieved documents. Post-processors run in the order given by
 * `RAG.postProcessors()`; each receives the previous one's output and the user's original question.
 *
 * Return new arrays rather than mutating the input; set `score` when you rescore. Documents you leave out
 * are recorded as dropped; call `context.drop(id, reason)` to say why.
 */
export interface PostProcessor {
  /** Short name shown in the trace, e.g. `adaptive-threshold`. */
  readonly name: string;
  process(question: string, documents: Document[], context: RunContext): Promise<Document[]>;
}
