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
];
