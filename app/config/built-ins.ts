import { componentClass, type LazyComponentDefinition } from '../../src/contracts/component.ts';
import { PROCESSOR_COMPONENTS } from '../../processors/components.ts';
import { PROVIDER_COMPONENTS } from '../../providers/components.ts';
import { CHAT_HISTORY_COMPONENTS, STORE_COMPONENTS } from '../../stores/components.ts';
import { ComponentRegistry } from './registry.ts';

/**
 * The service rerankers: a processor combined with a provider's relevance model (`service-rerankers.ts`),
 * declared here because they belong to neither family alone.
 */
export const SERVICE_RERANKER_COMPONENTS: readonly LazyComponentDefinition[] = [
  {
    kind: 'post-processor',
    name: 'jina-reranker',
    description: 'Jina rerank (JINA_API_KEY)',
    load: () => import('./service-rerankers.ts').then((module) => componentClass('post-processor', module.JinaReranker, module.jinaRerankerOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'cohere-reranker',
    description: 'Cohere rerank v2 (COHERE_API_KEY)',
    load: () => import('./service-rerankers.ts').then((module) => componentClass('post-processor', module.CohereReranker, module.cohereRerankerOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'voyage-reranker',
    description: 'Voyage AI rerank (VOYAGE_API_KEY)',
    load: () => import('./service-rerankers.ts').then((module) => componentClass('post-processor', module.VoyageReranker, module.voyageRerankerOptionsSchema)),
  },
  {
    kind: 'post-processor',
    name: 'localai-reranker',
    description: 'a rerank model served by LocalAI',
    load: () =>
      import('./service-rerankers.ts').then((module) => componentClass('post-processor', module.LocalAIReranker, module.localAIRerankerOptionsSchema)),
  },
];

/**
 * Every component Axon ships, by the name configuration uses: each family's definitions, declared beside its
 * adapters, and the compositions of two families. Each one's module (and through it, its SDK) is loaded when a
 * configuration names it, so a pipeline loads the adapters it uses and no others.
 */
export const BUILT_IN_COMPONENTS: readonly LazyComponentDefinition[] = [
  ...PROVIDER_COMPONENTS,
  ...STORE_COMPONENTS,
  ...CHAT_HISTORY_COMPONENTS,
  ...PROCESSOR_COMPONENTS,
  ...SERVICE_RERANKER_COMPONENTS,
];

/** A registry holding every built-in component; register your own on it. */
export function createRegistry(): ComponentRegistry {
  const registry = new ComponentRegistry();
  for (const definition of BUILT_IN_COMPONENTS) registry.register(definition);
  return registry;
}
