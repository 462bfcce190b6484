/**
 * Helpers shared by the processors that put untrusted text (a user's question, retrieved documents) into a
 * prompt. That text is data: it is wrapped in tags by the prompt, and anything inside it that could pass for
 * one of those tags is defused first, so it can neither close the data block nor open a fake one.
 */
import { z } from 'zod';
import type { ChatProvider } from '../../src/contracts/chat.ts';

export { neutralizeTagLookAlikes } from '../../src/context/evidence.ts';

/** Accepts any object with the two methods of a `ChatProvider`; used by the options schemas. */
export const chatProviderSchema = z.custom<ChatProvider>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ChatProvider).complete === 'function' &&
    typeof (value as ChatProvider).stream === 'function',
  { message: 'must be a chat provider (an object with complete() and stream())' },
);
