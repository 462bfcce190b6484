import type { Plan, Sufficiency } from './prompts.ts';
import type { Decision, Planner, PlanningState } from './planner.ts';
import type { AgenticResultItem } from './types.ts';

/** Settings of the offline planner. */
export interface OfflinePlannerOptions {
  /** How many of the best results bridge entities are taken from. @default 3 */
  bridgeResults?: number;
  /** Bridge entities taken from each of those results. @default 1 */
  bridgesPerResult?: number;
  /** How many of the best results the sufficiency check reads. @default 5 */
  judgedResults?: number;
}

/**
 * The deterministic planner used when no chat model is configured. It does the multi-hop step a model would:
 * the second-hop queries pair each bridge entity of the best results so far (the result's `metadata.title`,
 * and the proper names its text mentions that the question does not) with the question's terms that result
 * does not cover, so the search lands on the document about the bridge entity. It judges the results
 * sufficient when every content term of the question occurs in one of the best results, and otherwise plans
 * the missing terms next. It never asks for a whole document.
 */
export class OfflinePlanner implements Planner {
  readonly kind = 'offline';
  private readonly bridgeResults: number;
  private readonly bridgesPerResult: number;
  private readonly judgedResults: number;

  constructor(options: OfflinePlannerOptions = {}) {
    this.bridgeResults = options.bridgeResults ?? 3;
    this.bridgesPerResult = options.bridgesPerResult ?? 1;
    this.judgedResults = options.judgedResults ?? 5;
  }

  async plan(state: PlanningState): Promise<Decision<Plan>> {
    const questionTerms = new Set(contentTerms(state.question));
    const asked = new Set(state.previousQueries.map((entry) => `${entry.retriever}\u0000${normalize(entry.query)}`));
    const subQueries: Plan['subQueries'] = [];
    const add = (query: string, retriever: string) => {
      const key = `${retriever}\u0000${normalize(query)}`;
      if (query.trim() === '' || asked.has(key) || subQueries.length >= state.maxSubQueries) return;
      asked.add(key);
      subQueries.push({ query, retriever });
    };
    const missing = state.missing ? contentTerms(state.missing) : [];
    for (const result of state.results.slice(0, this.bridgeResults)) {
      const resultTerms = new Set(contentTerms(result.content));
      // What the question asks that this result does not say: the part the bridge entity's own page holds.
      const uncovered = missing.length > 0 ? missing : [...questionTerms].filter((term) => !resultTerms.has(term));
      for (const entity of bridgeEntities(result, questionTerms, this.bridgesPerResult)) {
        add(`${entity} ${uncovered.join(' ')}`.trim(), result.retriever);
      }
    }
    // Nothing to bridge from (no results yet, or no names in them): search what is missing on every retriever.
    if (subQueries.length === 0 && missing.length > 0) for (const retriever of state.retrievers) add(missing.join(' '), retriever.name);
    return { ok: true, value: { subQueries, expandDocuments: [] }, attempts: 0, warnings: [] };
  }

  async judge(state: PlanningState): Promise<Decision<Sufficiency>> {
    const covered = new Set(state.results.slice(0, this.judgedResults).flatMap((result) => contentTerms(result.content).map(stem)));
    const terms = [...new Set(contentTerms(state.question))];
    const missing = terms.filter((term) => !covered.has(stem(term)));
    // Word forms the light stemmer cannot join ("held", "hold") would keep a strict check from ever passing.
    const sufficient = terms.length === 0 || (terms.length - missing.length) / terms.length >= SUFFICIENT_COVERAGE;
    return { ok: true, value: { sufficient, missing: missing.join(' ') }, attempts: 0, warnings: [] };
  }
}

// --- Internal helpers ---

/** Share of the question's content terms the best results must contain to be judged sufficient. */
const SUFFICIENT_COVERAGE = 0.8;

function stem(term: string): string {
  if (term.length <= 4) return term;
  for (const suffix of ['ing', 'ies', 'ed', 'es', 's']) if (term.endsWith(suffix) && term.length - suffix.length >= 3) return term.slice(0, -suffix.length);
  return term;
}

const STOPWORDS = new Set(
  [
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its me my no not of on or our so',
    'than that the their them then there these they this to was we were what when where which who whom whose why will with would you your',
    'also both either first last one two same many much most name named called known other another such only after before between during',
    'about over under more less very just',
  ]
    .join(' ')
    .split(' '),
);

/** Lower-cased content words, diacritics folded, without stopwords or one-letter words. */
export function contentTerms(text: string): string[] {
  const words =
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => word.length > 1 && !STOPWORDS.has(word));
}

function normalize(query: string): string {
  return query.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** Runs of capitalised words (allowing `of`, `the`, `and`, `de` inside), e.g. `Shirley Temple`, `Bank of England`. */
const PROPER_NAME = /\p{Lu}[\p{L}\p{N}'’-]*(?:[ \t]+(?:(?:of|the|and|de|la|von|van|du|del)[ \t]+)*\p{Lu}[\p{L}\p{N}'’-]*)*/gu;
/** Words that open a sentence in capitals without being part of the name that follows. */
const LEADING_ARTICLE = /^(?:The|A|An|In|On|At|It|He|She|They|His|Her|Its|This|That|These|Those|After|Before|During|When|While)[ \t]+/;

/**
 * The entities a result names that the question does not: its title first, then the proper names in its text
 * by how often they occur (earlier first on ties), skipping names whose every word is in the question.
 */
function bridgeEntities(result: AgenticResultItem, questionTerms: Set<string>, limit: number): string[] {
  const entities: string[] = [];
  const seen = new Set<string>();
  const consider = (name: string) => {
    const terms = contentTerms(name);
    const key = terms.join(' ');
    // A name mostly made of the question's own words is the first hop, not a bridge to the second.
    if (terms.length === 0 || seen.has(key) || terms.filter((term) => questionTerms.has(term)).length * 2 >= terms.length) return;
    seen.add(key);
    entities.push(name.trim());
  };
  const title = result.metadata.title;
  if (typeof title === 'string') consider(title);
  const counts = new Map<string, { name: string; count: number; first: number }>();
  let position = 0;
  for (const match of result.content.matchAll(PROPER_NAME)) {
    // A capital after a sentence end may be an ordinary word; a one-word name that is a stopword is never a name.
    const name = match[0].replace(LEADING_ARTICLE, '').replace(/['’-]+$/, '');
    const terms = contentTerms(name);
    if (terms.length === 0) continue;
    const key = terms.join(' ');
    const entry = counts.get(key) ?? { name, count: 0, first: position++ };
    entry.count++;
    counts.set(key, entry);
  }
  // Multi-word names first: a lone capitalised word is as often an adjective ("American") as a name.
  const words = (name: string) => Math.min(2, name.split(/\s+/).length);
  const ranked = [...counts.values()].sort((left, right) => words(right.name) - words(left.name) || right.count - left.count || left.first - right.first);
  for (const entry of ranked) {
    if (entities.length >= limit) break;
    consider(entry.name);
  }
  return entities.slice(0, limit);
}
