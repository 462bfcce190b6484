/**
 * Ranking a second hop with the first. A sub-query planned from an entity found in a result (the designer the
 * rifle's page names) looks for that entity's own page; fused by reciprocal rank fusion alone, what only such a
 * sub-query finds ranks below everything the question's own search found, however well it answers. Chaining places
 * the sub-query's best results directly below the result it follows from, so a question's two hops sit together at
 * the top.
 */

import { contentTermSet, questionTerms } from '../answer/coverage.ts';
import { foldedWords, mentions, namesIn, titleName } from '../answer/names.ts';

/**
 * Whether a result found by a sub-query planned from `parent` is its second hop. A bridge is a name of several words
 * that the parent names and the question does not (the entity the parent bridges to). The result is the second hop
 * when it is the bridge's own page (titled with the name, or opening with it), whatever words it uses; when it
 * mentions a bridge and holds some of the question's terms the parent lacks; or when it holds a key term of the
 * question the parent lacks. A result that only mentions the bridge adds nothing the question asks: ranked directly
 * below the parent, it would only push the question's own next result down. A sub-query's result that does none of
 * these found something else.
 */
export function continuesFrom(question: string, parent: { content: string }, child: { content: string; title?: string }): boolean {
  const asked = namesIn(question).map((name) => name.words.join(' '));
  const questionText = question.toLowerCase();
  // Names of one word ("American", "DNA") are too common to tie two results together.
  const bridges = namesIn(parent.content).filter((name) => name.words.length > 1 && !asked.includes(name.words.join(' ')) && !mentions(questionText, name));
  const text = child.title === undefined ? child.content : `${child.title}\n${child.content}`;
  const parentTerms = contentTermSet(parent.content);
  const childTerms = contentTermSet(text);
  const adds = questionTerms(question).filter((term) => !parentTerms.has(term.term) && childTerms.has(term.term));
  // The bridge entity's own page is the second hop, whatever words it uses: titled with the name, or opening with it
  // as a page about it does ("Shirley Temple Black (1928–2014) was an American actress…").
  const ownName = child.title === undefined ? undefined : titleName(child.title, child.content);
  const ownWords = ownName === undefined ? '' : foldedWords(ownName).join(' ');
  const opening = foldedWords(child.content.slice(0, 200));
  const opensWith = (name: { words: string[] }) => name.words.every((word, index) => opening[index] === word);
  if (bridges.some((name) => name.words.join(' ') === ownWords || opensWith(name))) return true;
  // Another result naming the bridge is one only when it also holds some of the question the parent lacks.
  if (adds.length > 0 && bridges.some((name) => mentions(text, name))) return true;
  // Or it holds a key term of the question (a code, an acronym, a name) the parent lacks: the rest of the question.
  return adds.some((term) => term.key);
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
