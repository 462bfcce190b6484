import { contentTermSet, contextOf, describeUncovered, questionTerms, type QuestionTerm } from '../answer/coverage.ts';
import { extractiveAnswer } from '../answer/extractive.ts';
import { foldedWords, lowercaseVocabulary, mentions, namesIn, titleName } from '../answer/names.ts';
import type { Evidence } from '../context/evidence.ts';
import type { Decision, Planner, PlanningState } from './planner.ts';
import type { Plan, Sufficiency } from './prompts.ts';
import type { AgenticResultItem } from './types.ts';

/** Settings of the offline planner. */
export interface OfflinePlannerOptions {
  /** How many of the best results bridge entities are taken from. @default 2 */
  bridgeResults?: number;
  /** Bridge entities taken from each of those results. @default 1 */
  bridgesPerResult?: number;
  /** How many of the best results the sufficiency check reads. @default 5 */
  judgedResults?: number;
}

/**
 * The deterministic planner used when no chat model is configured. It does the multi-hop step a model would:
 * each second-hop query pairs a bridge entity of one of the best results so far (the result's `metadata.title`,
 * else the name its text mentions most, a name being a capitalised span of at most four words that is neither
 * a sentence's ordinary first word nor licence or document boilerplate) with the question's words that result
 * does not cover, so the search lands on the page about the bridge entity; the sub-query `follows` that result, so
 * what it finds ranks directly below it. A result naming nothing plans nothing: no sub-query is ever a bare verb or
 * a list of leftover words.
 *
 * It judges the results sufficient when the extractive answer over the best of them, hops chained, covers the
 * question (`coverage.ts`: every key term, and the share of its weighted content terms), and otherwise says which
 * of the question's words are missing. It never asks for a whole document.
 */
export class OfflinePlanner implements Planner {
  readonly kind = 'offline';
  private readonly bridgeResults: number;
  private readonly bridgesPerResult: number;
  private readonly judgedResults: number;

  constructor(options: OfflinePlannerOptions = {}) {
    this.bridgeResults = options.bridgeResults ?? 2;
    this.bridgesPerResult = options.bridgesPerResult ?? 1;
    this.judgedResults = options.judgedResults ?? 5;
  }

  async plan(state: PlanningState): Promise<Decision<Plan>> {
    // A second hop starts from a first: when the best results name none of what the question is about (its key
    // terms), a bridge from them leads elsewhere, so nothing is planned.
    const { coverage } = extractiveAnswer(state.question, evidenceOf(state.results.slice(0, this.judgedResults)));
    const keys = questionTerms(state.question).filter((term) => term.key);
    if (keys.length > 0 && coverage.missingKeys.length === keys.length) {
      const warning = `No second hop planned: the best results do not mention ${coverage.missingKeys.map((word) => `"${word}"`).join(', ')}.`;
      return { ok: true, value: { subQueries: [], expandDocuments: [] }, attempts: 0, warnings: [warning] };
    }
    const terms = questionTerms(state.question);
    // Words the results write in lower case: one of them opening a sentence or a heading is no name.
    const commonWords = lowercaseVocabulary(state.results.map((result) => result.content).join('\n'));
    const questionNames = namedTerms(terms, new Set([...lowercaseVocabulary(state.question), ...commonWords].map(folded)));
    const asked = new Set(state.previousQueries.map((entry) => `${entry.retriever}\u0000${normalize(entry.query)}`));
    const subQueries: Plan['subQueries'] = [];
    const add = (query: string, retriever: string, follows: number) => {
      const key = `${retriever}\u0000${normalize(query)}`;
      if (asked.has(key) || subQueries.length >= state.maxSubQueries) return;
      asked.add(key);
      subQueries.push({ query, retriever, follows });
    };
    const missing = state.missing ? new Set(contentTermSet(state.missing)) : undefined;
    const written = writtenWords(state.question);
    state.results.slice(0, this.bridgeResults).forEach((result, index) => {
      const covered = contentTermSet([result.content, ...contextOf(result.metadata)].join('\n'));
      // What the question asks that this result does not say: the part the bridge entity's own page holds.
      const uncovered = terms
        .filter((term) => (missing ? missing.has(term.term) : !covered.has(term.term)))
        .map((term) => written.get(term.word.toLowerCase()) ?? term.word.toLowerCase());
      for (const entity of bridgeEntities(result, state.question, questionNames, this.bridgesPerResult, commonWords))
        add(`${entity} ${uncovered.join(' ')}`.trim(), result.retriever, index + 1);
    });
    return { ok: true, value: { subQueries, expandDocuments: [] }, attempts: 0, warnings: [] };
  }

  async judge(state: PlanningState): Promise<Decision<Sufficiency>> {
    // Before any round, the question's own results must cover it nearly whole to skip planning: a missed second hop
    // costs more than a round, which only adds results below the ones it follows from.
    const threshold = state.iteration === 0 ? SKIP_PLANNING_COVERAGE : undefined;
    const { coverage } = extractiveAnswer(state.question, evidenceOf(state.results.slice(0, this.judgedResults)), { threshold });
    const warnings = coverage.sufficient ? [] : [describeUncovered(coverage)];
    return { ok: true, value: { sufficient: coverage.sufficient, missing: coverage.missing.join(' ') }, attempts: 0, warnings };
  }
}

// --- Internal helpers ---

/**
 * The question's words as it writes them, by their folded form (`questionTerms` folds diacritics: "cafe" for "café",
 * "との大学て" for "どの大学で"): a sub-query is searched as text, and the search reads "café", not "cafe".
 */
function writtenWords(question: string): Map<string, string> {
  const written = new Map<string, string>();
  for (const word of question.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []) {
    const key = folded(word);
    // Kept as written, case included: lower-casing "İstanbul" would add a combining dot no one wrote.
    if (key !== word.toLowerCase() && !written.has(key)) written.set(key, word);
  }
  return written;
}

/** A word as `questionTerms` compares it: diacritics and sound marks off, lower case. */
function folded(word: string): string {
  return word
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/**
 * Share of the question's weighted content terms the speculative results must cover (besides every key term) for no
 * round to be planned. Chosen on HotpotQA-500 and SciFact (docs/agentic.md).
 */
const SKIP_PLANNING_COVERAGE = 0.9;

function evidenceOf(results: AgenticResultItem[]): Evidence[] {
  return results.map((result, index) => ({
    label: index + 1,
    document: {
      id: result.id,
      content: result.content,
      sourceType: result.sourceType,
      sourceName: result.sourceName,
      score: result.score,
      metadata: result.metadata,
    },
  }));
}

function normalize(query: string): string {
  return query.trim().toLowerCase().replace(/\s+/g, ' ');
}

/**
 * The question's terms that name something: those it writes with a capital or as a code ("Ralph Hefferline",
 * "Wigan Athletic", "L5"). A word the question writes in lower case ("at a university", "the league cup", "the
 * production company") is a common noun there, so a name sharing it ("Columbia University", "Football League") is
 * another entity, often the very one asked for. A capital that only opens the question names nothing when the
 * question or its results write that word in lower case ("University where Mara Quell taught…" beside "a
 * university"), as `namesIn` reads a sentence's first word. A question written all in lower case says nothing by its
 * capitals: then all its terms count.
 */
function namedTerms(terms: readonly QuestionTerm[], commonWords: ReadonlySet<string>): Set<string> {
  const named = terms.filter((term) => term.key || (/^\p{Lu}/u.test(term.word) && !commonWords.has(folded(term.word))));
  return new Set((named.length > 0 ? named : terms).map((term) => term.term));
}

/**
 * The entities a result names that the question does not: its title first when it is a name (`titleName`), then the names in its text, the ones
 * of several words first (a lone capitalised word is as often an adjective, "American", as a name), then by how
 * often they occur, earlier first on ties. A name the question writes out ("Le roi malgré lui"), or one mostly made
 * of what the question names (`namedTerms`), is the first hop, not a bridge to the second.
 */
function bridgeEntities(
  result: AgenticResultItem,
  question: string,
  questionNames: ReadonlySet<string>,
  limit: number,
  commonWords: ReadonlySet<string>,
): string[] {
  const entities: string[] = [];
  const seen = new Set<string>();
  const consider = (name: string) => {
    const terms = [...contentTermSet(name)];
    const key = terms.join(' ');
    if (terms.length === 0 || seen.has(key) || terms.filter((term) => questionNames.has(term)).length * 2 >= terms.length) return;
    if (mentions(question, { words: foldedWords(name) })) return;
    seen.add(key);
    entities.push(name.trim());
  };
  // A title is a bridge when it is a name ("Shirley Temple", "Kiss and Tell (1945 film)"), not a heading.
  const title = typeof result.metadata.title === 'string' ? titleName(result.metadata.title, result.content) : undefined;
  if (title !== undefined) consider(title);
  const words = (name: { words: string[] }) => Math.min(2, name.words.length);
  const ranked = namesIn(result.content, commonWords).sort((left, right) => words(right) - words(left) || right.count - left.count || left.first - right.first);
  for (const name of ranked) {
    if (entities.length >= limit) break;
    consider(name.text);
  }
  return entities.slice(0, limit);
}
