// The composition root: a whole pipeline from configuration (createRag), the component registry (an inversify
// container), the built-in components by name, and EmbeddedRAG, the offline default. Published as `axon-rag/config`.
export { createRag, loadConfigFile, ConfiguredRAG, type CreateRagOptions, type PipelineParts } from './create-rag.ts';
export { createRegistry, BUILT_IN_COMPONENTS } from './built-ins.ts';
export {
  ComponentRegistry,
  defineComponent,
  componentImplementation,
  type ComponentDefinition,
  type LazyComponentDefinition,
  type ComponentImplementation,
  type ComponentKind,
  type ComponentDependencies,
} from './registry.ts';
export { pipelineConfigSchema, type PipelineConfig } from './schema.ts';
export { defaultEmbeddingCacheDirectory, EMBEDDING_CACHE_FOLDER } from './embedding-cache.ts';
export { EmbeddedRAG, type EmbeddedRagOptions, LOCAL_EMBEDDINGS_HYBRID_WEIGHTS, retrievalDefaultsFor } from './embedded-rag.ts';
