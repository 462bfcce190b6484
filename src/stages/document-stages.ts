import type { PostProcessor } from '../contracts/post-processor.ts';
import { findSuperseded } from '../context/contract.ts';
import { checkEligibility } from '../context/eligibility.ts';
import type { Document } from '../document.ts';
import { AxonError, throwIfAborted } from '../errors.ts';
import type { Stage } from '../pipeline/stage.ts';
import type { RagRunState } from './state.ts';

// The document side of a run after search: each post-processor, then eligibility.

/** One post-processor over the documents; it ranks against the search question. Its output is checked. */
export function postProcessStage<State extends Pick<RagRunState, 'documents' | 'searchQuestion'>>(postProcessor: PostProcessor): Stage<State> {
  return {
    kind: 'post-process',
    name: postProcessor.name,
    input: (state) => ({ documents: state.documents }),
    async run(state, step) {
      const output = await postProcessor.process(state.searchQuestion, state.documents.slice(), step.context);
      throwIfAborted(step.signal, postProcessor.name);
      state.documents = validateProcessorOutput(output, postProcessor.name);
      return state;
    },
    output: (state) => ({ documents: state.documents }),
  };
}

/**
 * Eligibility, checked again before inclusion: the search filter cannot judge freshness or malformed metadata,
 * and a store or a post-processor may not have honoured it. Refused and superseded documents go to `omitted`;
 * `pii` ones are redacted. Recorded when eligibility had a say (a caller, a refusal, a redaction): a run without
 * a caller over plain documents has no eligibility record.
 */
export function eligibilityStage<State extends Pick<RagRunState, 'documents' | 'omitted' | 'caller' | 'policy'>>(): Stage<State> {
  return {
    kind: 'eligibility',
    name: 'eligibility',
    optional: true,
    input: (state) => ({ documents: state.documents }),
    run(state, step) {
      const eligible: Document[] = [];
      const omittedBefore = state.omitted.length;
      let redacted = 0;
      for (const document of state.documents) {
        const decision = checkEligibility(document, state.caller ?? {}, state.policy);
        if (decision.eligible) {
          if (decision.document !== document) redacted++;
          eligible.push(decision.document);
        } else {
          state.omitted.push({ ref: document.id, reason: decision.reason, detail: decision.detail, sourceName: document.sourceName });
          step.drop(document.id, `${decision.reason}: ${decision.detail}`);
        }
      }
      const superseded = findSuperseded(eligible);
      for (const [id, by] of superseded) {
        const document = eligible.find((item) => item.id === id)!;
        // Named by its source where people read it; the trace keeps the newer version's id beside the reason.
        const newer = eligible.find((item) => item.id === by)?.sourceName || 'a newer version';
        state.omitted.push({ ref: id, reason: 'stale', detail: `superseded by ${newer}`, sourceName: document.sourceName });
        step.drop(id, 'stale: superseded by a newer version', { keptId: by });
      }
      state.documents = eligible.filter((document) => !superseded.has(document.id));
      const refused = state.omitted.length - omittedBefore;
      if (state.caller !== undefined || refused > 0 || redacted > 0) step.detail({ caller: state.caller !== undefined, refused, redacted });
      else step.discard();
      return state;
    },
    output: (state) => ({ documents: state.documents }),
  };
}

// --- Internal helpers ---

function validateProcessorOutput(output: unknown, name: string): Document[] {
  if (!Array.isArray(output)) {
    throw new AxonError('INVALID_PROCESSOR_OUTPUT', `Post-processor returned ${output === null ? 'null' : typeof output} instead of an array of documents.`, {
      component: name,
      fix: 'Return the (possibly filtered or reordered) array of documents from process().',
      details: { processor: name },
    });
  }
  output.forEach((document, index) => {
    if (document === null || typeof document !== 'object' || typeof document.id !== 'string' || typeof document.content !== 'string') {
      throw new AxonError('INVALID_PROCESSOR_OUTPUT', `Post-processor returned an invalid document at position ${index}.`, {
        component: name,
        fix: `Have ${name}.process() return documents it was given (or copies with a new score): objects with an id and a content.`,
        details: { processor: name, position: index },
      });
    }
    if (typeof document.score !== 'number' || !Number.isFinite(document.score)) {
      throw new AxonError(
        'INVALID_PROCESSOR_OUTPUT',
        `Post-processor set the score of "${document.id}" to ${String(document.score)}; scores must be finite numbers.`,
        {
          component: name,
          fix: 'Check the scoring code of this post-processor (a division by zero or a missing field gives NaN).',
          details: { processor: name, position: index, id: document.id },
        },
      );
    }
  });
  return output as Document[];
}
