import { describe } from 'vitest';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import { describeChatConformance } from '../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';

// Runs against the real OpenAI API only when OPENAI_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.OPENAI_API_KEY)('live: OpenAI', () => {
  describe('OpenAIEmbeddings', () => {
    describeEmbeddingsConformance(() => new OpenAIEmbeddings({ model: process.env.OPENAI_EMBEDDINGS_MODEL ?? 'text-embedding-3-small', maxBatchSize: 8 }), {
      live: true,
    });
  });
  describe('OpenAIChat', () => {
    describeChatConformance(() => new OpenAIChat({ model: process.env.OPENAI_CHAT_MODEL ?? 'gpt-4o-mini', temperature: 0 }), { live: true });
  });
});
