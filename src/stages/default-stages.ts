import { contextStage, generateStage } from './answer-stages.ts';
import { condenseStage } from './condense-stage.ts';
import { eligibilityStage, postProcessStage } from './document-stages.ts';
import { dedupeStage, embedStage, fusionStage, preProcessStage, searchStages } from './search-stages.ts';
import type { RagRunState, RagStage } from './state.ts';
import type { RagComponents } from './types.ts';

/**
 * A pipeline's retrieval stages, in order: the condense stage (which runs only for a question asked within a
 * conversation), each pre-processor, embed, the searches (per query and retriever),
 * fusion, de-duplication, each post-processor, eligibility.
 */
export function defaultRetrievalStages(parts: RagComponents): RagStage[] {
  return [
    condenseStage(),
    ...parts.preProcessors.map((preProcessor) => preProcessStage<RagRunState>(preProcessor)),
    embedStage<RagRunState>(parts.embeddings),
    searchStages<RagRunState>(),
    fusionStage<RagRunState>(),
    dedupeStage<RagRunState>(),
    ...parts.postProcessors.map((postProcessor) => postProcessStage<RagRunState>(postProcessor)),
    eligibilityStage<RagRunState>(),
  ];
}

/** A pipeline's answer stages, after retrieval: the context packet, then generate (guardrail, conflicts, answer, citations). */
export function defaultAnswerStages(parts: RagComponents): RagStage[] {
  return [contextStage(), generateStage(parts.chat)];
}
