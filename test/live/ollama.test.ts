import { describe } from 'vitest';
import { OllamaChat } from '../../providers/ollama/ollama-chat.ts';
import { OllamaEmbeddings } from '../../providers/ollama/ollama-embeddings.ts';
import { describeChatConformance } from '../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';

// Runs against a real Ollama server only when OLLAMA_HOST is set (e.g. http://localhost:11434); skipped otherwise.
// OLLAMA_CHAT_MODEL and OLLAMA_EMBEDDINGS_MODEL name models pulled there (default llama3.1, nomic-embed-text).
describe.skipIf(!process.env.OLLAMA_HOST)('live: Ollama', () => {
  describe('OllamaEmbeddings', () => {
    describeEmbeddingsConformance(() => new OllamaEmbeddings({ model: process.env.OLLAMA_EMBEDDINGS_MODEL ?? 'nomic-embed-text', maxBatchSize: 8 }), {
      live: true,
    });
  });
  describe('OllamaChat', () => {
    describeChatConformance(() => new OllamaChat({ model: process.env.OLLAMA_CHAT_MODEL ?? 'llama3.1', temperature: 0 }), { live: true });
  });
});
