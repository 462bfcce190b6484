// Model providers. One export line per provider class.
export { LocalHashEmbeddings, localHashEmbeddingsOptionsSchema, type LocalHashEmbeddingsOptions } from './local/hash-embeddings.ts';
export { OpenAIChat, openAIChatOptionsSchema, type OpenAIChatOptions } from './openai/openai-chat.ts';
export { OpenAIEmbeddings, openAIEmbeddingsOptionsSchema, type OpenAIEmbeddingsOptions } from './openai/openai-embeddings.ts';
export { CohereEmbeddings, cohereEmbeddingsOptionsSchema, type CohereEmbeddingsOptions } from './cohere/cohere-embeddings.ts';
export { CohereRerankModel, cohereRerankModelOptionsSchema, type CohereRerankModelOptions } from './cohere/cohere-rerank.ts';
export { CohereChat, cohereChatOptionsSchema, type CohereChatOptions } from './cohere/cohere-chat.ts';
export { JinaEmbeddings, jinaEmbeddingsOptionsSchema, type JinaEmbeddingsOptions } from './jina/jina-embeddings.ts';
export { JinaRerankModel, jinaRerankModelOptionsSchema, type JinaRerankModelOptions } from './jina/jina-rerank.ts';
export { LocalAIRerankModel, localAIRerankModelOptionsSchema, type LocalAIRerankModelOptions } from './localai/localai-rerank.ts';
// The definitions configuration builds providers from, each module loaded when a configuration names it.
export { PROVIDER_COMPONENTS } from './components.ts';
