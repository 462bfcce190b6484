import { componentClass, type LazyComponentDefinition } from '../src/contracts/component.ts';

/**
 * The providers configuration can name, each loaded (with its SDK) only when a configuration names it.
 * `{ "embeddings": { "provider": "<name>", …options } }`, `{ "chat": { "provider": "<name>", … } }`.
 */
export const PROVIDER_COMPONENTS: readonly LazyComponentDefinition[] = [
  {
    kind: 'embeddings',
    name: 'local',
    description: 'offline hashing embedder (no network)',
    load: () =>
      import('./local/hash-embeddings.ts').then((module) => componentClass('embeddings', module.LocalHashEmbeddings, module.localHashEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'openai',
    description: 'OpenAI or any OpenAI-compatible server (baseURL)',
    load: () =>
      import('./openai/openai-embeddings.ts').then((module) => componentClass('embeddings', module.OpenAIEmbeddings, module.openAIEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'cohere',
    description: 'Cohere embed (v2)',
    load: () =>
      import('./cohere/cohere-embeddings.ts').then((module) => componentClass('embeddings', module.CohereEmbeddings, module.cohereEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'jina',
    description: 'Jina embeddings',
    load: () => import('./jina/jina-embeddings.ts').then((module) => componentClass('embeddings', module.JinaEmbeddings, module.jinaEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'gemini',
    description: 'Google Gemini embeddings (GEMINI_API_KEY)',
    load: () =>
      import('./gemini/gemini-embeddings.ts').then((module) => componentClass('embeddings', module.GeminiEmbeddings, module.geminiEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'voyage',
    description: 'Voyage AI embeddings (VOYAGE_API_KEY)',
    load: () =>
      import('./voyage/voyage-embeddings.ts').then((module) => componentClass('embeddings', module.VoyageEmbeddings, module.voyageEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'mistral',
    description: 'Mistral embeddings (MISTRAL_API_KEY)',
    load: () =>
      import('./mistral/mistral-embeddings.ts').then((module) => componentClass('embeddings', module.MistralEmbeddings, module.mistralEmbeddingsOptionsSchema)),
  },
  {
    kind: 'embeddings',
    name: 'azure-openai',
    description: 'an Azure OpenAI embeddings deployment (AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY)',
    load: () =>
      import('./azure/azure-openai-embeddings.ts').then((module) =>
        componentClass('embeddings', module.AzureOpenAIEmbeddings, module.azureOpenAIEmbeddingsOptionsSchema),
      ),
  },
  {
    kind: 'embeddings',
    name: 'ollama',
    description: "Ollama's native API (no key)",
    load: () =>
      import('./ollama/ollama-embeddings.ts').then((module) => componentClass('embeddings', module.OllamaEmbeddings, module.ollamaEmbeddingsOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'openai',
    description: 'OpenAI or any OpenAI-compatible server (baseURL)',
    load: () => import('./openai/openai-chat.ts').then((module) => componentClass('chat', module.OpenAIChat, module.openAIChatOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'cohere',
    description: 'Cohere chat (v2)',
    load: () => import('./cohere/cohere-chat.ts').then((module) => componentClass('chat', module.CohereChat, module.cohereChatOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'anthropic',
    description: 'Anthropic Messages API (ANTHROPIC_API_KEY)',
    load: () => import('./anthropic/anthropic-chat.ts').then((module) => componentClass('chat', module.AnthropicChat, module.anthropicChatOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'gemini',
    description: 'Google Gemini (GEMINI_API_KEY)',
    load: () => import('./gemini/gemini-chat.ts').then((module) => componentClass('chat', module.GeminiChat, module.geminiChatOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'mistral',
    description: 'Mistral chat completions (MISTRAL_API_KEY)',
    load: () => import('./mistral/mistral-chat.ts').then((module) => componentClass('chat', module.MistralChat, module.mistralChatOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'azure-openai',
    description: 'an Azure OpenAI chat deployment (AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY)',
    load: () => import('./azure/azure-openai-chat.ts').then((module) => componentClass('chat', module.AzureOpenAIChat, module.azureOpenAIChatOptionsSchema)),
  },
  {
    kind: 'chat',
    name: 'ollama',
    description: "Ollama's native API (no key)",
    load: () => import('./ollama/ollama-chat.ts').then((module) => componentClass('chat', module.OllamaChat, module.ollamaChatOptionsSchema)),
  },
];
