/**
 * `axon-rag/ai-sdk`: the Vercel AI SDK both ways. In: an AI SDK language, embedding or reranking model (from any
 * `@ai-sdk/*` provider, specification V2 to V4) as Axon's chat, embeddings or reranker. Out: an Axon answer stream
 * as the AI SDK's UI message stream, which `useChat` shows with its sources. This entry, and only it, loads `ai`
 * (an optional peer dependency).
 */
export { AISdkChat, aiSdkChatOptionsSchema, type AISdkChatOptions } from './ai-sdk-chat.ts';
export { AISdkEmbeddings, aiSdkEmbeddingsOptionsSchema, type AISdkEmbeddingsOptions } from './ai-sdk-embeddings.ts';
export { AISdkReranker, aiSdkRerankerOptionsSchema, type AISdkRerankerOptions } from './ai-sdk-reranker.ts';
export type { AISdkEmbeddingModel, AISdkLanguageModel, AISdkRerankingModel } from './ai-sdk-specification.ts';
export {
  citationSpans,
  toUIMessageStream,
  toUIMessageStreamResponse,
  type AxonCitationSpan,
  type AxonMessageMetadata,
  type AxonSourceMetadata,
  type AxonStageData,
  type AxonUIMessage,
  type AxonUIStreamOptions,
} from './ui-message-stream.ts';
