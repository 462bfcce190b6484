import type { ChatMessage } from '../../src/contracts/chat.ts';
import { AxonError } from '../../src/errors.ts';

const ROLES = new Set(['system', 'user', 'assistant']);

/**
 * Check a conversation before it is sent: a non-empty array of `{role, content}` with a known role and string
 * content. A bad message is a programming error, so it fails here rather than as a 400 from the service.
 *
 * @throws AxonError `INVALID_MESSAGES` naming the first bad message.
 */
export function assertChatMessages(messages: unknown, component: string): asserts messages is ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new AxonError('INVALID_MESSAGES', 'messages must be a non-empty array.', {
      component,
      fix: 'Pass at least one { role, content } message.',
      details: { argument: 'messages' },
    });
  }
  messages.forEach((message: unknown, position) => {
    const { role, content } = (message ?? {}) as Partial<ChatMessage>;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw new AxonError('INVALID_MESSAGES', `messages[${position}].role is ${JSON.stringify(role)}; expected system, user or assistant.`, {
        component,
        fix: "Give each message the role 'system', 'user' or 'assistant'.",
        details: { argument: `messages[${position}].role`, position },
      });
    }
    if (typeof content !== 'string') {
      throw new AxonError('INVALID_MESSAGES', `messages[${position}].content must be a string.`, {
        component,
        fix: 'Pass each message’s content as text (join the parts of a message made of several).',
        details: { argument: `messages[${position}].content`, position },
      });
    }
  });
}

/**
 * Check what a provider's `embed` or `rerank` received: an array of strings no longer than the declared limit.
 *
 * @throws AxonError `INVALID_INPUT`; `CAPACITY_EXCEEDED` for more than `limit`
 */
export function assertTexts(texts: unknown, limit: number, label: string, component: string): asserts texts is string[] {
  if (!Array.isArray(texts)) {
    throw new AxonError('INVALID_INPUT', `${label} must be an array of strings.`, {
      component,
      fix: `Pass ${label} as an array of strings.`,
      details: { argument: label },
    });
  }
  if (texts.length > limit) {
    throw new AxonError('CAPACITY_EXCEEDED', `${texts.length} ${label} in one call; at most ${limit} are accepted.`, {
      component,
      fix: 'Split the list into batches (embedAll and the reranker post-processors do this for you).',
      details: { argument: label, limit },
    });
  }
  texts.forEach((text: unknown, position) => {
    if (typeof text !== 'string')
      throw new AxonError('INVALID_INPUT', `${label}[${position}] is not a string.`, {
        component,
        fix: `Pass every entry of ${label} as a string.`,
        details: { argument: label, position },
      });
  });
}

/** The `top_n` sent to a rerank service: `topN` rounded down and kept within 1..`documentCount`. */
export function clampTopN(topN: number, documentCount: number): number {
  return Math.max(1, Math.min(Math.floor(topN), documentCount));
}
