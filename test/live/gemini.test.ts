import { describe } from 'vitest';
import { GeminiChat } from '../../providers/gemini/gemini-chat.ts';
import { GeminiEmbeddings } from '../../providers/gemini/gemini-embeddings.ts';
import { describeChatConformance } from '../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';

// Runs against the real Gemini API only when GEMINI_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.GEMINI_API_KEY)('live: Gemini', () => {
  describe('GeminiEmbeddings', () => {
    describeEmbeddingsConformance(() => new GeminiEmbeddings({ dimensions: 768, maxBatchSize: 8 }), { live: true });
  });
  describe('GeminiChat', () => {
    describeChatConformance(() => new GeminiChat({ model: process.env.GEMINI_CHAT_MODEL ?? 'gemini-2.5-flash', temperature: 0 }), { live: true });
  });
});
