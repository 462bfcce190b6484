/**
 * The condense step: a follow-up question rewritten, before retrieval, into one that can be searched on its own.
 * Offline and deterministic by default; with a chat model, by a prompt (see condense-model.ts). A question that
 * already stands alone is searched as it is.
 */
import type { ConversationMessage, ConversationTurn } from '../contracts/chat-history.ts';
import { AxonError } from '../errors.ts';
import { answerSentences, contentTerms, type Mention, namesIn } from './salience.ts';
import { type Exchange, toExchanges } from './turns.ts';

/** A conversation so far: the turns a `ChatHistory` loaded, or chat messages (oldest first). */
export type ConversationHistory = readonly ConversationTurn[] | readonly ConversationMessage[];

/** What the condense step did, for the trace: what came in, what is searched, and why. */
export interface CondenseResult {
  /** The question as asked. */
  input: string;
  /** The question to search: `input` itself unless it was rewritten. */
  output: string;
  /**
   * `unchanged`: searched as asked (no earlier turn, or it stands alone); `offline`: the earlier turn's names and
   * terms were added; `model`: the chat model rewrote it.
   */
  method: 'unchanged' | 'offline' | 'model';
  /** Why, in words. */
  reason: string;
  /** What the offline rewrite added, in order (empty otherwise). */
  added: string[];
  /** Problems met on the way (an unusable model reply, say), each said once. */
  warnings: string[];
}

export interface OfflineCondenseOptions {
  /** Most names taken from the previous turn. @default 3 */
  maxNames?: number;
  /** Most content words of the previous question taken when it names nothing. @default 4 */
  maxTerms?: number;
}

/** Why a question needs the conversation to be understood, or `undefined` when it stands alone. */
export function followUpReason(question: string): string | undefined {
  const text = question.trim();
  if (/^(?:and|also|so|then|but)\b|^(?:what|how)\s+about\b|^what\s+else\b/i.test(text)) {
    return `it continues the conversation ("${text.split(/\s+/).slice(0, 2).join(' ')}")`;
  }
  const names = namesIn(text);
  const words = [...text.matchAll(/[\p{L}\p{N}'’]+/gu)];
  const firstNameAt = names.length === 0 ? Number.POSITIVE_INFINITY : firstMention(text, names);
  const asksWho = /^(?:who|which)\b/i.test(text);
  let said = 0;
  for (let index = 0; index < words.length; index++) {
    const word = words[index][0].toLowerCase().replace(/['’]s$/, '');
    const before = index === 0 ? '' : words[index - 1][0].toLowerCase();
    const after = words[index + 1]?.[0].toLowerCase() ?? '';
    const possessive = POSSESSIVES.has(word) || (word === 'her' && after !== '' && contentTerms(after).length > 0);
    // A pronoun refers back unless the question said enough before it to hold what it refers to: a name ("Marie
    // Curie … her prize"), four content words (a long question's pronoun points inside it), or, for a possessive
    // or a demonstrative, two ("stem cells segregate their chromosomes"), or the entity a who/which question asks
    // for ("Who was known by his stage name …").
    const resolved = words[index].index > firstNameAt || said >= 4 || ((possessive || DEMONSTRATIVES.has(word)) && (said >= 2 || (asksWho && possessive)));
    if (!resolved && PERSONAL_PRONOUNS.has(word)) return `"${words[index][0]}" refers to something not named in the question`;
    // "this", "these", "those" point at something; a name anywhere in the question is what they point at.
    if (!resolved && DEMONSTRATIVES.has(word) && names.length === 0) return `"${words[index][0]}" refers to something not named in the question`;
    said += contentTerms(words[index][0]).length;
    if (word === 'that' && names.length === 0 && (index === words.length - 1 || POINTING_BEFORE_THAT.has(before))) {
      return `"that" refers to something not named in the question`;
    }
    if (word === 'there' && names.length === 0 && !EXISTENTIAL_NEIGHBOURS.has(after) && !EXISTENTIAL_NEIGHBOURS.has(before)) {
      return `"there" refers to a place not named in the question`;
    }
  }
  if (names.length === 0 && contentTerms(text).length <= 1) return 'it names no subject of its own';
  return undefined;
}

/**
 * Condense offline: a follow-up (see `followUpReason`) gets the names of the previous turn added, those in the
 * sentences its answer cites first (the entities the answer introduced before those its question already named),
 * then the rest of its answer's; when the previous turn names nothing, the content words of its question (its
 * searched question, where the history recorded one, so a chain of follow-ups keeps its subject). A question
 * that stands alone, or has no turn before it, is returned as it is. Deterministic: the same input always gives
 * the same output.
 *
 * ```ts
 * // partial
 * const result = condenseQuestion('When did she retire?', turns);
 * result.output; // 'When did she retire? (Hanne Lund, Orvik glacier)'
 * ```
 *
 * @throws AxonError `INVALID_HISTORY` for a history that is neither turns nor messages.
 */
export function condenseQuestion(question: string, history: ConversationHistory, options: OfflineCondenseOptions = {}): CondenseResult {
  return condenseExchanges(question, toExchanges(history, COMPONENT), options);
}

/** `condenseQuestion` over a history already converted to its exchanges (`toExchanges`), so a caller converts it once. */
export function condenseExchanges(question: string, exchanges: readonly Exchange[], options: OfflineCondenseOptions = {}): CondenseResult {
  assertQuestion(question);
  const maxNames = count(options.maxNames, 3, 'maxNames');
  const maxTerms = count(options.maxTerms, 4, 'maxTerms');
  const previous = lastExchange(exchanges);
  const unchanged = (reason: string): CondenseResult => ({ input: question, output: question, method: 'unchanged', reason, added: [], warnings: [] });
  if (previous === undefined) return unchanged('no earlier turn');
  const dependence = followUpReason(question);
  if (dependence === undefined) return unchanged('it stands alone: it names its own subject');

  const present = new Set(contentTerms(question));
  const covered = (terms: string[]) => terms.length > 0 && terms.every((term) => present.has(term));
  const previousQuestion = previous.searchedQuestion ?? previous.question;
  const { cited, uncited } = answerSentences(previous.answer);
  const askedNames = new Set(namesIn(previousQuestion).map((mention) => mention.key));
  const fromCited = rank(cited.flatMap((sentence) => namesIn(sentence)));
  const ordered = [
    ...fromCited.filter((mention) => !askedNames.has(mention.key)),
    ...namesIn(previousQuestion),
    ...fromCited,
    ...rank(uncited.flatMap((sentence) => namesIn(sentence))),
  ];
  const added: string[] = [];
  const seen = new Set<string>();
  for (const mention of ordered) {
    if (added.length >= maxNames) break;
    if (seen.has(mention.key) || covered(mention.key.split(' '))) continue;
    seen.add(mention.key);
    added.push(mention.name);
  }
  if (added.length === 0) {
    for (const term of contentTerms(previousQuestion)) {
      if (added.length >= maxTerms) break;
      if (present.has(term) || added.includes(term)) continue;
      added.push(term);
    }
  }
  if (added.length === 0) return unchanged(`${dependence}, but the previous turn names nothing to add`);
  return {
    input: question,
    output: `${question.trim()} (${added.join(', ')})`,
    method: 'offline',
    reason: `${dependence}: added what the previous turn named`,
    added,
    warnings: [],
  };
}

// --- Internal helpers ---

const COMPONENT = 'condense';
const PERSONAL_PRONOUNS = new Set([
  'he',
  'she',
  'him',
  'her',
  'his',
  'hers',
  'himself',
  'herself',
  'they',
  'them',
  'their',
  'theirs',
  'themselves',
  'it',
  'its',
  'itself',
]);
const DEMONSTRATIVES = new Set(['this', 'these', 'those']);
const POSSESSIVES = new Set(['his', 'its', 'their', 'theirs', 'hers']);
/** Words after which `that` points at something ("about that", "is that true"), rather than joining a clause. */
const POINTING_BEFORE_THAT = new Set([
  ...['about', 'of', 'for', 'with', 'from', 'after', 'before', 'like', 'than', 'in', 'on', 'at', 'to', 'by'],
  ...['is', 'was', 'are', 'were', 'did', 'does', 'do', 'when', 'why', 'how', 'what', 'where', 'who', 'which'],
]);
/** "Is there", "there are": `there` as the empty subject, not a place. */
const EXISTENTIAL_NEIGHBOURS = new Set(['is', 'are', 'was', 'were', 'be', 'been', 'will', 'has', 'have', 'had', 'isn', 'aren', 'wasn', 'weren']);

/** Where the first name of the question starts. */
function firstMention(text: string, names: Mention[]): number {
  return Math.min(...names.map((mention) => text.indexOf(mention.name)).filter((at) => at >= 0), Number.POSITIVE_INFINITY);
}

/** The last exchange that says something: the turn a follow-up follows. */
function lastExchange(exchanges: readonly Exchange[]): Exchange | undefined {
  for (let index = exchanges.length - 1; index >= 0; index--) {
    const exchange = exchanges[index];
    if (exchange.question.trim() !== '' || exchange.answer.trim() !== '') return exchange;
  }
  return undefined;
}

/** Names of several words before single words (a lone capital is as often an adjective), then by mentions, then first seen. */
function rank(mentions: Mention[]): Mention[] {
  const counts = new Map<string, { mention: Mention; count: number; first: number }>();
  mentions.forEach((mention, position) => {
    const entry = counts.get(mention.key) ?? { mention, count: 0, first: position };
    entry.count++;
    counts.set(mention.key, entry);
  });
  const words = (mention: Mention) => Math.min(2, mention.key.split(' ').length);
  return [...counts.values()]
    .sort((left, right) => words(right.mention) - words(left.mention) || right.count - left.count || left.first - right.first)
    .map((entry) => entry.mention);
}

function assertQuestion(question: unknown): asserts question is string {
  if (typeof question === 'string' && question.trim() !== '') return;
  throw new AxonError('INVALID_QUESTION', 'The question must be a non-empty string.', {
    component: COMPONENT,
    fix: 'Pass the question the user asked.',
    details: { argument: 'question' },
  });
}

function count(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (Number.isInteger(value) && value >= 0) return value;
  throw new AxonError('INVALID_OPTION', `${option} must be a whole number ≥ 0, got ${String(value)}.`, {
    component: COMPONENT,
    fix: `Pass ${option} as a whole number, 0 or more, or leave it out.`,
    details: { option },
  });
}
