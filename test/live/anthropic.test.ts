import { describe } from 'vitest';
import { AnthropicChat } from '../../providers/anthropic/anthropic-chat.ts';
import { describeChatConformance } from '../../testing/chat.ts';

// Runs against the real Anthropic API only when ANTHROPIC_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.ANTHROPIC_API_KEY)('live: Anthropic', () => {
  describe('AnthropicChat', () => {
    describeChatConformance(() => new AnthropicChat({ model: process.env.ANTHROPIC_CHAT_MODEL ?? 'claude-haiku-4-5', temperature: 0 }), { live: true });
  });
});
