import { describe } from 'vitest';
import { MistralChat } from '../../providers/mistral/mistral-chat.ts';
import { MistralEmbeddings } from '../../providers/mistral/mistral-embeddings.ts';
import { describeChatConformance } from '../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';

// Runs against the real Mistral API only when MISTRAL_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.MISTRAL_API_KEY)('live: Mistral', () => {
  describe('MistralEmbeddings', () => {
    describeEmbeddingsConformance(() => new MistralEmbeddings({ maxBatchSize: 8 }), { live: true });
  });
  describe('MistralChat', () => {
    describeChatConformance(() => new MistralChat({ temperature: 0 }), { live: true });
  });
});
