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
export { AnthropicChat, anthropicChatOptionsSchema, type AnthropicChatOptions } from './anthropic/anthropic-chat.ts';
export { GeminiChat, geminiChatOptionsSchema, type GeminiChatOptions } from './gemini/gemini-chat.ts';
export { GeminiEmbeddings, geminiEmbeddingsOptionsSchema, type GeminiEmbeddingsOptions } from './gemini/gemini-embeddings.ts';
export { VoyageEmbeddings, voyageEmbeddingsOptionsSchema, type VoyageEmbeddingsOptions } from './voyage/voyage-embeddings.ts';
export { VoyageRerankModel, voyageRerankModelOptionsSchema, type VoyageRerankModelOptions } from './voyage/voyage-rerank.ts';
export { MistralChat, mistralChatOptionsSchema, type MistralChatOptions } from './mistral/mistral-chat.ts';
export { MistralEmbeddings, mistralEmbeddingsOptionsSchema, type MistralEmbeddingsOptions } from './mistral/mistral-embeddings.ts';
export { AzureOpenAIChat, azureOpenAIChatOptionsSchema, type AzureOpenAIChatOptions } from './azure/azure-openai-chat.ts';
export { AzureOpenAIEmbeddings, azureOpenAIEmbeddingsOptionsSchema, type AzureOpenAIEmbeddingsOptions } from './azure/azure-openai-embeddings.ts';
export { OllamaChat, ollamaChatOptionsSchema, type OllamaChatOptions } from './ollama/ollama-chat.ts';
export { OllamaEmbeddings, ollamaEmbeddingsOptionsSchema, type OllamaEmbeddingsOptions } from './ollama/ollama-embeddings.ts';
// The definitions configuration builds providers from, each module loaded when a configuration names it.
export { PROVIDER_COMPONENTS } from './components.ts';
