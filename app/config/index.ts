// The composition root: a whole pipeline from configuration (createRag, which resolves it in an inversify
// container of its own), the component registry, the built-in components by name, and EmbeddedRAG, the offline
// default. Published as `axon-rag/config`.
export { createRag, ConfiguredRAG, type CreateRagOptions, type PipelineParts } from './create-rag.ts';
export { loadConfigFile } from './config-file.ts';
export { createRegistry, BUILT_IN_COMPONENTS, SERVICE_RERANKER_COMPONENTS } from './built-ins.ts';
export {
  ComponentRegistry,
  defineComponent,
  componentImplementation,
  componentClass,
  type ComponentDefinition,
  type LazyComponentDefinition,
  type ComponentImplementation,
  type ComponentKind,
  type ComponentKinds,
  type ComponentPart,
  type ComponentDependencies,
} from './registry.ts';
export { pipelineConfigSchema, type PipelineConfig } from './schema.ts';
export { defaultEmbeddingCacheDirectory, EMBEDDING_CACHE_FOLDER } from './embedding-cache.ts';
export { priceTableSchema, modelPriceSchema } from '../../src/pipeline/price-table.ts';
export { EmbeddedRAG, type EmbeddedRagOptions, LOCAL_EMBEDDINGS_HYBRID_WEIGHTS, retrievalDefaultsFor } from './embedded-rag.ts';
