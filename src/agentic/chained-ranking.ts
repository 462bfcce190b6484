/**
 * Ranking a second hop with the first. A sub-query planned from an entity found in a result (the designer the
 * rifle's page names) looks for that entity's own page; fused by reciprocal rank fusion alone, what only such a
 * sub-query finds ranks below everything the question's own search found, however well it answers. Chaining places
 * the sub-query's best results directly below the result it follows from, so a question's two hops sit together at
 * the top.
 */

import { contentTermSet, questionTerms } from '../answer/coverage.ts';
import { mentions, namesIn } from '../answer/names.ts';

/**
 * Whether a result found by a sub-query planned from `parent` is its second hop: it mentions a name of several
 * words that the parent names and the question does not (the entity the parent bridges to), its title included, or
 * it holds a key term of the question the parent lacks. A sub-query's result that does neither found something
 * else.
 */
export function continuesFrom(question: string, parent: { content: string }, child: { content: string; title?: string }): boolean {
  const asked = namesIn(question).map((name) => name.words.join(' '));
  const questionText = question.toLowerCase();
  // Names of one word ("American", "DNA") are too common to tie two results together.
  const bridges = namesIn(parent.content).filter((name) => name.words.length > 1 && !asked.includes(name.words.join(' ')) && !mentions(questionText, name));
  const text = child.title === undefined ? child.content : `${child.title}\n${child.content}`;
  if (bridges.some((name) => mentions(text, name))) return true;
  // Or it holds a key term of the question (a code, an acronym, a name) the parent lacks: the rest of the question.
  const parentTerms = contentTermSet(parent.content);
  const childTerms = contentTermSet(text);
  return questionTerms(question).some((term) => term.key && !parentTerms.has(term.term) && childTerms.has(term.term));
}

/** The results of one sub-query planned from a result: keys of the results, best first. */
export interface RankedChain {
  /** The result the sub-query follows from. */
  parent: string;
  /** What the sub-query found, best first. */
  children: readonly string[];
}

/**
 * `order` (result keys, best first) with each chain's best `perChain` results (the parent itself left out) moved
 * directly below their parent, in the chains' order, and so on down (a result placed as a child brings its own
 * chains with it). One of them already placed above stays where it is: the hop is there already. A chain whose
 * parent is not in `order` changes nothing. Every key of `order` appears once, and nothing else.
 */
export function chainedRanking(order: readonly string[], chains: readonly RankedChain[], perChain: number): string[] {
  const known = new Set(order);
  const childrenOf = new Map<string, string[][]>();
  for (const chain of chains) {
    if (!known.has(chain.parent)) continue;
    const children = chain.children.filter((child) => child !== chain.parent).slice(0, perChain);
    childrenOf.set(chain.parent, [...(childrenOf.get(chain.parent) ?? []), children.filter((child) => known.has(child))]);
  }
  const placed = new Set<string>();
  const ranking: string[] = [];
  const place = (key: string) => {
    if (placed.has(key)) return;
    placed.add(key);
    ranking.push(key);
    for (const children of childrenOf.get(key) ?? []) for (const child of children) place(child);
  };
  for (const key of order) place(key);
  return ranking;
}
