/**
 * What every `ChatHistory` checks before it writes: conversation ids that can never be a path, and turns of a
 * known shape in a canonical form (so every implementation stores and returns the same thing).
 */
import type { ConversationInfo, ConversationMessage, ConversationTurn } from '../contracts/chat-history.ts';
import type { Citation } from '../document.ts';
import { AxonError } from '../errors.ts';

/** Longest conversation id. */
export const MAX_CONVERSATION_ID_LENGTH = 128;
/** Most characters of one turn's texts together (question, searched question, answer, run id). */
export const MAX_TURN_CHARACTERS = 1_000_000;
/** Most citations one turn records. */
export const MAX_TURN_CITATIONS = 1000;

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;
/** Names Windows reserves for devices, whatever the extension: a file named after one cannot be made there. */
const DEVICE_NAMES = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;
/** A surrogate code unit that is not half of a pair: what a `u` pattern sees as a lone code point of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;
const TURN_KEYS = new Set(['question', 'searchedQuestion', 'answer', 'citations', 'runId', 'askedAt', 'answeredAt']);
const CITATION_KEYS = new Set(['label', 'id', 'sourceType', 'sourceName', 'pageNumber', 'chunkIndex']);

/** Whether `id` is a conversation id every `ChatHistory` accepts (see `assertConversationId`). */
export function isConversationId(id: unknown): id is string {
  try {
    assertConversationId(id, 'conversation');
    return true;
  } catch {
    return false;
  }
}

/**
 * Check a conversation id: 1 to 128 letters, digits, `_` or `-`, and not a name Windows reserves for a device.
 * So no id is ever a path, a hidden file or `..`, whatever the history does with it.
 *
 * @throws AxonError `INVALID_INPUT` naming the id's problem.
 */
export function assertConversationId(id: unknown, component: string): asserts id is string {
  let problem: string | undefined;
  if (typeof id !== 'string') problem = `must be a string, got ${id === null ? 'null' : typeof id}`;
  else if (id.length === 0) problem = 'is empty';
  else if (id.length > MAX_CONVERSATION_ID_LENGTH) problem = `is ${id.length} characters long; the most is ${MAX_CONVERSATION_ID_LENGTH}`;
  else if (!ID_PATTERN.test(id)) problem = `${JSON.stringify(id.slice(0, 40))} holds characters other than letters, digits, _ and -`;
  else if (DEVICE_NAMES.test(id)) problem = `${JSON.stringify(id)} is a device name on Windows`;
  if (problem === undefined) return;
  throw new AxonError('INVALID_INPUT', `The conversation id ${problem}.`, {
    component,
    fix: 'Use an id of 1 to 128 letters, digits, _ and - (a UUID works).',
    details: { argument: 'id' },
  });
}

/**
 * A validated copy of `turn` in the form histories store: strings well formed (no lone surrogate, no NUL), the
 * timestamps rewritten as `toISOString` writes them, citations with their known fields only. Unknown fields are
 * refused rather than dropped, so nothing given is silently lost.
 *
 * @throws AxonError `INVALID_INPUT` naming the field.
 */
export function normalizeConversationTurn(turn: unknown, component: string): ConversationTurn {
  const fail = (field: string, problem: string): never => {
    throw new AxonError('INVALID_INPUT', `The turn's ${field} ${problem}.`, {
      component,
      fix: 'Pass { question, searchedQuestion, answer, citations, runId, askedAt, answeredAt } with strings, ISO 8601 times and the citations of the answer.',
      details: { argument: `turn.${field}` },
    });
  };
  if (turn === null || typeof turn !== 'object' || Array.isArray(turn)) return fail('value', 'must be an object');
  const input = turn as Record<string, unknown>;
  for (const key of Object.keys(input)) if (!TURN_KEYS.has(key)) fail(key, 'is not a field of a turn');
  const text = (field: string, required: boolean): string => {
    const value = input[field];
    if (typeof value !== 'string') return fail(field, `must be a string, got ${value === null ? 'null' : typeof value}`);
    if (required && value.trim() === '') fail(field, 'is empty');
    if (LONE_SURROGATE.test(value)) fail(field, 'holds a lone surrogate (not well-formed Unicode)');
    if (value.includes('\u0000')) fail(field, 'holds a NUL character');
    return value;
  };
  const question = text('question', true);
  const searchedQuestion = text('searchedQuestion', true);
  const answer = text('answer', false);
  const runId = text('runId', true);
  const characters = question.length + searchedQuestion.length + answer.length + runId.length;
  if (characters > MAX_TURN_CHARACTERS) fail('texts', `are ${characters} characters together; the most is ${MAX_TURN_CHARACTERS}`);
  const time = (field: string): string => {
    const value = text(field, true);
    const parsed = Date.parse(value);
    if (!Number.isFinite(parsed)) fail(field, `is not an ISO 8601 time: ${JSON.stringify(value.slice(0, 40))}`);
    return new Date(parsed).toISOString();
  };
  const askedAt = time('askedAt');
  const answeredAt = time('answeredAt');
  if (!Array.isArray(input.citations)) return fail('citations', 'must be an array');
  if (input.citations.length > MAX_TURN_CITATIONS) fail('citations', `holds ${input.citations.length} entries; the most is ${MAX_TURN_CITATIONS}`);
  const citations = input.citations.map((citation, index) => normalizeCitation(citation, (problem) => fail(`citations[${index}]`, problem)));
  return { question, searchedQuestion, answer, citations, runId, askedAt, answeredAt };
}

/** Check `lastTurns` of `ChatHistory.load`: absent, or a positive integer. */
export function assertLastTurns(lastTurns: unknown, component: string): void {
  if (lastTurns === undefined || (Number.isInteger(lastTurns) && (lastTurns as number) > 0)) return;
  throw new AxonError('INVALID_OPTION', `lastTurns must be a positive integer, got ${String(lastTurns)}.`, {
    component,
    fix: 'Leave lastTurns out to load every turn.',
    details: { option: 'lastTurns' },
  });
}

/** What `list` reports for the turns of one conversation (which must hold at least one). */
export function conversationInfo(id: string, turns: readonly ConversationTurn[]): ConversationInfo {
  return { id, turns: turns.length, startedAt: turns[0].askedAt, updatedAt: turns[turns.length - 1].answeredAt };
}

/** Most recently updated first, ties by id: the order of `ChatHistory.list`. */
export function compareConversations(left: ConversationInfo, right: ConversationInfo): number {
  return left.updatedAt < right.updatedAt ? 1 : left.updatedAt > right.updatedAt ? -1 : left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}

/** The messages of turns: each question as a user message, each answer as an assistant message, in order. */
export function turnsToMessages(turns: readonly ConversationTurn[]): ConversationMessage[] {
  return turns.flatMap((turn): ConversationMessage[] => [
    { role: 'user', content: turn.question },
    { role: 'assistant', content: turn.answer },
  ]);
}

/** One question and the answer that followed it, from turns or from messages. */
export interface Exchange {
  question: string;
  /** What was searched for the question, where the history recorded it. */
  searchedQuestion?: string;
  /** Empty when no answer followed (a trailing user message). */
  answer: string;
}

/**
 * The exchanges of a history given as turns or as messages. Messages pair each user message with the assistant
 * messages after it (several in a row are joined); assistant messages before the first user message are kept as an
 * exchange with an empty question.
 *
 * @throws AxonError `INVALID_HISTORY` for a message that is not `{ role: 'user' | 'assistant', content: string }`.
 */
export function toExchanges(history: readonly ConversationTurn[] | readonly ConversationMessage[], component: string): Exchange[] {
  if (!Array.isArray(history)) {
    throw new AxonError('INVALID_HISTORY', 'The history must be an array of turns or of messages.', {
      component,
      fix: "Pass an array of turns { question, answer } or of messages { role: 'user' | 'assistant', content }.",
      details: { argument: 'history' },
    });
  }
  const exchanges: Exchange[] = [];
  history.forEach((entry: ConversationTurn | ConversationMessage, position) => {
    if (entry !== null && typeof entry === 'object' && 'question' in entry) {
      const turn = entry as ConversationTurn;
      if (typeof turn.question !== 'string' || typeof turn.answer !== 'string') invalidMessage(position, component);
      exchanges.push({
        question: turn.question,
        searchedQuestion: typeof turn.searchedQuestion === 'string' ? turn.searchedQuestion : undefined,
        answer: turn.answer,
      });
      return;
    }
    const message = entry as ConversationMessage;
    if (message === null || typeof message !== 'object' || typeof message.content !== 'string' || (message.role !== 'user' && message.role !== 'assistant')) {
      invalidMessage(position, component);
    }
    if (message.role === 'user') exchanges.push({ question: message.content, answer: '' });
    else if (exchanges.length === 0) exchanges.push({ question: '', answer: message.content });
    else {
      const last = exchanges[exchanges.length - 1];
      last.answer = last.answer === '' ? message.content : `${last.answer}\n\n${message.content}`;
    }
  });
  return exchanges;
}

// --- Internal helpers ---

function normalizeCitation(value: unknown, fail: (problem: string) => never): Citation {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('must be an object');
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) if (!CITATION_KEYS.has(key)) fail(`has an unknown field ${JSON.stringify(key)}`);
  if (!Number.isInteger(input.label) || (input.label as number) < 1) fail('label must be a positive integer');
  for (const key of ['id', 'sourceType', 'sourceName'] as const) {
    const field = input[key];
    if (typeof field !== 'string' || LONE_SURROGATE.test(field) || field.includes('\u0000')) fail(`${key} must be a well-formed string`);
  }
  const citation: Citation = {
    label: input.label as number,
    id: input.id as string,
    sourceType: input.sourceType as string,
    sourceName: input.sourceName as string,
  };
  for (const key of ['pageNumber', 'chunkIndex'] as const) {
    if (input[key] === undefined) continue;
    if (!Number.isInteger(input[key]) || (input[key] as number) < 0) fail(`${key} must be an integer ≥ 0`);
    citation[key] = input[key] as number;
  }
  return citation;
}

function invalidMessage(position: number, component: string): never {
  throw new AxonError('INVALID_HISTORY', `history[${position}] is neither a turn nor a message { role: 'user' | 'assistant', content }.`, {
    component,
    fix: 'Pass the turns a ChatHistory loaded, or messages with role "user" or "assistant" and string content.',
    details: { argument: 'history', position },
  });
}
