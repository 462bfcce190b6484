import { componentClass, componentImplementation, type LazyComponentDefinition } from '../src/contracts/component.ts';
import type { ChatProvider } from '../src/contracts/chat.ts';

/**
 * The processors configuration can name, each loaded only when a configuration names it:
 * `{ "preProcessors": [{ "type": "<name>", …options }] }`, `{ "postProcessors": [{ "type": "<name>", … }] }`.
 * Those that need the pipeline's chat model declare it (`requires: ['chat']`) and are given it, so their
 * configuration entry has no `chat` option. The service rerankers (Jina, Cohere, LocalAI) combine a processor
 * with a provider, so they are declared where both are known: the composition root (`axon-rag/config`).
 */
export const PROCESSOR_COMPONENTS: readonly LazyComponentDefinition[] = [
  {
    kind: 'pre-processor',
    name: 'query-transformation',
    description: "REWRITING, DECOMPOSITION, HYDE or MULTI_QUERY with the pipeline's chat model",
    requires: ['chat'],
    load: () =>
      import('./pre/query-transformation.ts').then(({ QueryTransformation, queryTransformationOptionsSchema }) =>
        componentImplementation('pre-processor', {
          options: queryTransformationOptionsSchema.omit({ chat: true }),
          create: (options, { chat }) => new QueryTransformation({ ...options, chat: chat as ChatProvider }),
        }),
      ),
  },
  {
    kind: 'post-processor',
    name: 'fixed-threshold',
    load: () =>
      import('./post/fixed-threshold.ts').then((module) => componentClass('post-processor', module.FixedThreshold, module.fixedThresholdOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'adaptive-threshold',
    load: () =>
      import('./post/adaptive-threshold.ts').then((module) =>
        componentClass('post-processor', module.AdaptiveThreshold, module.adaptiveThresholdOptionsSchema),
      ),
  },
  {
    kind: 'post-processor',
    name: 'top-n',
    load: () => import('./post/top-n.ts').then((module) => componentClass('post-processor', module.TopN, module.topNOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'dedupe',
    load: () => import('./post/dedupe.ts').then((module) => componentClass('post-processor', module.Dedupe, module.dedupeOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'mmr',
    description: 'maximal marginal relevance: k documents, relevance against redundancy (lambda)',
    load: () => import('./post/mmr.ts').then((module) => componentClass('post-processor', module.MMR, module.mmrOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'llm-reranker',
    description: 'reranks by document ids returned by the chat model',
    requires: ['chat'],
    load: () =>
      import('./post/llm-reranker.ts').then(({ LLMReranker, llmRerankerOptionsSchema }) =>
        componentImplementation('post-processor', {
          options: llmRerankerOptionsSchema.omit({ chat: true }),
          create: (options, { chat }) => new LLMReranker({ ...options, chat: chat as ChatProvider }),
        }),
      ),
  },
];
