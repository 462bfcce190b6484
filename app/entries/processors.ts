// The `axon-rag/processors` entry: the processors family, and the service rerankers (a processor combined with a
// provider's relevance model), which are composed at the root because the two families never import each other.
export * from '../../processors/index.ts';
export { JinaReranker, jinaRerankerOptionsSchema, type JinaRerankerOptions } from '../config/service-rerankers.ts';
export { CohereReranker, cohereRerankerOptionsSchema, type CohereRerankerOptions } from '../config/service-rerankers.ts';
export { LocalAIReranker, localAIRerankerOptionsSchema, type LocalAIRerankerOptions } from '../config/service-rerankers.ts';
export { VoyageReranker, voyageRerankerOptionsSchema, type VoyageRerankerOptions } from '../config/service-rerankers.ts';
