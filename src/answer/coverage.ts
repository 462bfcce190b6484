/**
 * How much of a question a set of sentences covers: the shared rule behind the extractive answer's status, the
 * offline sufficiency check of agentic retrieval, and the check of a model's answer against what it cites.
 *
 * A question's content terms are its words without stop words, lower-cased, diacritics folded and lightly
 * stemmed. Letter–digit tokens stay whole (`L5` → `l5`, `p16INK4a` → `p16ink4a`, and `SHA-256`, `IL-6` join to
 * `sha256`, `il6`), so a sentence that shares only the `5` of `L5` does not cover it. The same spelling is read
 * the same on both sides: Greek letters spelled out (`Aβ` → `abeta`, `TNF-α` → `tnf`, `alpha`; the micro sign of
 * `µg` as `u`), two adjacent words joined by a hyphen or a slash, or a space next to a number or an acronym, also
 * as one (`ADMP/chordin`, `ADMP-chordin` → `admpchordin` as well; never digits to digits, so `CD4-5` is not
 * `cd45`; see `joinable`), the two numbers of Latin words and long `-ation`/`-ession` nouns and their verbs read
 * alike (`bacterium`/`bacteria`, `phosphorylation`/`phosphorylated`; see `stem`). Each term weighs by how rare
 * it is among the evidence sentences (inverse sentence frequency), and a term no sentence of the evidence holds
 * weighs most: the evidence lacking a question's rare words is the surest sign that it does not answer it.
 */

/**
 * Share of the question's weighted content terms the cited sentences must cover for the evidence to count as
 * answering (besides every key term). Chosen on SciFact and HotpotQA-500 (docs/agentic.md, "Trustworthy status").
 */
export const COVERAGE_THRESHOLD = 0.4;

/** How many times a key term (a code, an acronym, a name) weighs as much as another term of the same rarity. */
const KEY_TERM_WEIGHT = 3;

/** One content term of a question, with the word it was read from (for messages). */
export interface QuestionTerm {
  term: string;
  word: string;
  /** A bare number: it counts towards coverage, but a sentence sharing only numbers with the question covers nothing. */
  numeric: boolean;
  /**
   * A word that picks out what the question is about: a code (`L5`, `APOE4`), an acronym (`AIRE`, `UK`) or a
   * capitalised word inside the question (a name: `Corliss Archer`). It weighs `KEY_TERM_WEIGHT` times as much.
   * An abbreviation the question spells out itself ("Epigenetic modulating agents (EMAs)") is not one: the words
   * it stands for are the question's terms already, and evidence may write either.
   */
  key: boolean;
  /**
   * A term a conversation's rewrite added to the follow-up (a name from the turns before it, see `followUpTerms`):
   * it counts towards the share, and one such term must be covered (the follow-up is about what it names), but
   * none is required on its own, since the user did not ask about each of them.
   */
  context?: boolean;
}

/** How a set of sentences covers a question. */
export interface Coverage {
  /** Weighted share of the question's content terms covered, 0 to 1 (1 when the question has no content term). */
  share: number;
  /** The question's words whose terms are covered, in question order. */
  covered: string[];
  /** The question's words whose terms are not covered, in question order. */
  missing: string[];
  /** The question's key terms (codes, acronyms, names) no quoted sentence covers, in question order. */
  missingKeys: string[];
  /** Whether every key term is covered and `share` reaches the threshold: the evidence answers the question. */
  sufficient: boolean;
}

/** The content terms of a question, in order, each once. */
export function questionTerms(question: string): QuestionTerm[] {
  const seen = new Map<string, QuestionTerm>();
  const spelledOut = definedAbbreviations(question);
  analyze(question).entries.forEach(({ term, word, start }, index) => {
    const numeric = /^\p{N}+$/u.test(term);
    const key = !numeric && !spelledOut.has(word) && (/\p{N}/u.test(term) || /^\p{Lu}{2,}$/u.test(word) || (/^\p{Lu}/u.test(word) && index > 0 && !start));
    const existing = seen.get(term);
    if (existing) existing.key ||= key;
    else seen.set(term, { term, word, numeric, key });
  });
  return [...seen.values()];
}

/**
 * The abbreviations a text spells out itself, as written: "Epigenetic modulating agents (EMAs)", "Immunoglobulin G
 * (IgG)", "Cancer-associated fibroblasts (CAFs)". The capitals of the parenthesised word must be the initials, in
 * order, of the words right before it (a hyphenated word's parts count as words; a stop word may be skipped, as in
 * "Department of Energy (DOE)"), the first capital the initial of the first of those words. A parenthesised word
 * with a digit is never one: "the L5 segment (L5S1)", "Apolipoprotein E4 (APOE4)" name a code the evidence must hold.
 */
export function definedAbbreviations(text: string): Set<string> {
  const defined = new Set<string>();
  for (const match of text.matchAll(/([\p{L}\p{N}'’ /-]+?)\s*\(([\p{L}\p{N}/-]{2,12})\)/gu)) {
    const abbreviation = match[2];
    if (/\p{N}/u.test(abbreviation)) continue;
    const capitals = (abbreviation.match(/\p{Lu}/gu) ?? []).map((letter) => letter.toLowerCase());
    if (capitals.length < 2) continue;
    const words = match[1]
      .toLowerCase()
      .split(/[\s/-]+/)
      .filter(Boolean);
    if (spellsOut(capitals, words)) for (const word of abbreviation.split(/[/-]/)) defined.add(word);
  }
  return defined;
}

/**
 * Whether `capitals` are the initials of the last words of `words` (a stop word may give none): each capital,
 * read from the last, is the initial of the next word back, and the first capital starts a word.
 */
function spellsOut(capitals: readonly string[], words: readonly string[]): boolean {
  const matches = (capital: number, word: number): boolean => {
    if (capital < 0) return true;
    if (word < 0) return false;
    if (words[word][0] === capitals[capital] && matches(capital - 1, word - 1)) return true;
    return capital < capitals.length - 1 && STOPWORDS.has(words[word]) && matches(capital, word - 1);
  };
  return matches(capitals.length - 1, words.length - 1);
}

/**
 * The terms that decide whether evidence answers a follow-up: the terms of the question as the user `asked` it,
 * then those the conversation's rewrite (`searched`) added, marked `context` (never key terms). "When did she
 * retire?" searched as "When did she retire? (Hanne Lund, Norwegian Polar Institute, Orvik)" is answered by a
 * sentence on Hanne Lund's retirement that does not mention Orvik: the rewrite's names say what the question is
 * about, not what the answer must hold. Without a rewrite (`searched === asked`) these are `questionTerms(asked)`.
 */
export function followUpTerms(asked: string, searched: string): QuestionTerm[] {
  const own = questionTerms(asked);
  if (searched === asked) return own;
  const ownTerms = new Set(own.map((term) => term.term));
  const added = questionTerms(searched).filter((term) => !ownTerms.has(term.term));
  return [...own, ...added.map((term) => ({ ...term, key: false, context: true }))];
}

/**
 * The content terms of a text, as a set (what a sentence can cover), with the spellings of a term that joins two
 * adjacent words: "ADMP/chordin", "ADMP-chordin" and "ADMP chordin" also hold `admpchordin`, so a question that
 * writes "Admpchordin" finds them. With `joins` (a question's, see `termJoins`), a text that writes as one word
 * two words the question writes apart holds both: "TNFα" holds `tnf` and `alpha` for "TNF-alpha".
 */
export function contentTermSet(text: string, joins?: ReadonlyMap<string, readonly string[]>): Set<string> {
  return sentenceTerms(text, joins).terms;
}

/**
 * `contentTermSet(text, joins)` as `terms`, and how many distinct content terms the text has as `size`, its joined
 * spellings not counted (how long a sentence is), read in one pass.
 */
export function sentenceTerms(text: string, joins?: ReadonlyMap<string, readonly string[]>): { terms: Set<string>; size: number } {
  const { entries, joined } = analyze(text);
  const terms = new Set(entries.map((entry) => entry.term));
  const size = terms.size;
  for (const { term } of joined) terms.add(term);
  if (joins !== undefined && joins.size > 0) for (const term of [...terms]) for (const part of joins.get(term) ?? []) terms.add(part);
  return { terms, size };
}

/**
 * The joined spellings of a question's adjacent words, each with the question's content terms it joins: for
 * "ADMP-chordin", `admpchordin` → `admp`, `chordin`. Pass it to `contentTermSet` for the evidence of that question.
 */
export function termJoins(question: string): Map<string, string[]> {
  const joins = new Map<string, string[]>();
  for (const { term, parts } of analyze(question).joined) if (parts.length > 0) joins.set(term, [...new Set([...(joins.get(term) ?? []), ...parts])]);
  return joins;
}

/**
 * The weight of each question term among `sentences` (each a set of terms): `log(1 + n / frequency)`, times
 * `KEY_TERM_WEIGHT` for a key term. A term no sentence holds counts as if half a sentence held it, so it weighs more
 * than the rarest present one: the evidence lacking a question's words is the surest sign it does not answer it.
 */
export function termWeights(terms: readonly QuestionTerm[], sentences: readonly ReadonlySet<string>[]): Map<string, number> {
  const count = Math.max(1, sentences.length);
  const weights = new Map<string, number>();
  for (const { term, key } of terms) {
    let frequency = 0;
    for (const sentence of sentences) if (sentence.has(term)) frequency++;
    weights.set(term, Math.log(1 + count / Math.max(0.5, frequency)) * (key ? KEY_TERM_WEIGHT : 1));
  }
  return weights;
}

/**
 * How the union of `coveredTerms` covers the question: the weighted share, the words covered and missing, and
 * whether it is sufficient: every key term covered, one of the `context` terms covered when there are any, and the
 * share at least `threshold`. A question without content terms is covered by anything.
 */
export function coverageOf(
  terms: readonly QuestionTerm[],
  weights: ReadonlyMap<string, number>,
  coveredTerms: ReadonlySet<string>,
  threshold = COVERAGE_THRESHOLD,
): Coverage {
  let total = 0;
  let covered = 0;
  const coveredWords: string[] = [];
  const missing: string[] = [];
  const missingKeys: string[] = [];
  let contextTerms = 0;
  let contextCovered = 0;
  for (const { term, word, key, context } of terms) {
    const weight = weights.get(term) ?? 1;
    total += weight;
    if (context) contextTerms++;
    if (coveredTerms.has(term)) {
      covered += weight;
      coveredWords.push(word);
      if (context) contextCovered++;
    } else {
      missing.push(word);
      if (key) missingKeys.push(word);
    }
  }
  const share = total === 0 ? 1 : covered / total;
  return {
    share: Math.round(share * 10_000) / 10_000,
    covered: coveredWords,
    missing,
    missingKeys,
    sufficient: share >= threshold && missingKeys.length === 0 && (contextTerms === 0 || contextCovered > 0),
  };
}

/**
 * What a chunk sits under, as text: its headings (`metadata.headingPath`) and its document's title
 * (`metadata.title`). A sentence of the "Vince Phillips" page that says "He held the IBF title" is about him.
 */
export function contextOf(metadata: Record<string, unknown>): string[] {
  const { headingPath, title } = metadata;
  return [...(Array.isArray(headingPath) ? headingPath : []), title].filter((text): text is string => typeof text === 'string');
}

/**
 * Why evidence does not answer a question, in one line: the question's words it does not cover, key terms first.
 * @example "The evidence does not mention L5 (nor pay); it covers 40% of the question."
 */
export function describeUncovered(coverage: Coverage): string {
  const others = coverage.missing.filter((word) => !coverage.missingKeys.includes(word));
  const list = (words: string[]) => words.map((word) => `"${word}"`).join(', ');
  const named = coverage.missingKeys.length > 0 ? `${list(coverage.missingKeys)}${others.length > 0 ? ` (nor ${list(others)})` : ''}` : list(others);
  return `The evidence does not mention ${named || 'enough of the question'}; it covers ${Math.round(coverage.share * 100)}% of the question.`;
}

/** Whether a sentence shares a term with the question other than a bare number. */
export function sharesContent(terms: readonly QuestionTerm[], sentence: ReadonlySet<string>): boolean {
  return terms.some((term) => !term.numeric && sentence.has(term.term));
}

// --- Internal helpers ---

const STOPWORDS = new Set(
  [
    'a an and are as at be been being but by can could did do does doing done for from had has have having how i if in into is it its',
    'me my no nor not of off on or our ours out so than that the their theirs them then there these they this those to too up was we',
    'were what when where which while who whom whose why will with would you your yours he him his she her hers itself himself herself',
    'also any all both each either neither few more most other some such only own same very just should shall may might must',
    'about above after again against before below between during over under until upon via per',
    'many much one ones s t',
    // Words that name the kind of answer asked for, which the answering text states without naming the kind:
    // "What nationality…?" is answered by "an American director", "In what year…?" by "in 1844".
    'type types kind kinds sort sorts name named called common nationality occupation profession year genre long',
    // Light verbs, which carry the question's grammar rather than its subject: "How long do refunds take?".
    'take takes taking took taken get gets getting got gotten make makes making made give gives giving gave given',
    'go goes going went gone come comes coming came put puts putting use uses using used happen happens happened',
  ]
    .join(' ')
    .split(' '),
);

/**
 * Words of a text with their content terms, in order, stop words and one-letter words left out; `start` says the
 * word opens a sentence (after a stop word or not), where a capital says nothing. `joined` holds the term of each
 * pair of adjacent words `joinable` reads as one ("ADMP/chordin" → `admpchordin`, "400 mg" → `400mg`), with the
 * content terms of the pair (`parts`).
 */
function analyze(text: string): { entries: { term: string; word: string; start: boolean }[]; joined: { term: string; parts: string[] }[] } {
  const prepared = text
    // The micro sign, and a mu before a unit, is a prefix ("µg", "μM"), written "u" in plain text, not the letter mu.
    .replace(/\u00B5|\u03BC(?=(?:g|l|L|m|M|mol|s)(?!\p{L}))/gu, 'u')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    // Greek letters are spelled out, as they are written in plain text: "Aβ" → Abeta, "TNF-α" → TNF-alpha, "NF-κB" → NF-kappaB.
    .replace(GREEK_LETTERS, (letter) => GREEK_NAMES.get(letter.toLowerCase()) ?? letter)
    // A possessive is its noun: "Arthur's" → Arthur.
    .replace(/(\p{L})['’]s(?![\p{L}\p{N}])/gu, '$1')
    // camelCase and PascalCase identifiers are their words ("AdaptiveThreshold" → Adaptive Threshold), but not
    // names with a short prefix ("McGowan", "DeMarco", "iPhone"), which are also written in one case, nor codes
    // with digits or capital runs ("FoxO3a", "ureABIEFGH", "ComYMV").
    .replace(/[\p{L}\p{N}]+/gu, (word) => (/\p{N}/u.test(word) ? word : word.replace(/(\p{Ll}{2})(\p{Lu}\p{Ll})/gu, '$1 $2')))
    // A letter run and a number joined by a hyphen are one code: "SHA-256", "IL-6", "COVID-19", "miR-7a".
    .replace(/(?<![\p{L}\p{N}])(\p{L}{1,6})-(\p{N}+\p{L}{0,3})(?![\p{L}\p{N}-])/gu, '$1$2');
  const entries: { term: string; word: string; start: boolean }[] = [];
  const joined: { term: string; parts: string[] }[] = [];
  let previousEnd = 0;
  let previous: { word: string; lower: string; term: string | undefined; end: number } | undefined;
  for (const match of prepared.matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0];
    const lower = word.toLowerCase();
    const start = previousEnd === 0 ? prepared.slice(0, match.index).trim() === '' : /[.!?]["”')\]]*\s+$/.test(prepared.slice(previousEnd, match.index));
    previousEnd = match.index + word.length;
    const content = !(STOPWORDS.has(lower) || (lower.length === 1 && !/\p{N}/u.test(lower)));
    const term = content ? stem(lower) : undefined;
    if (previous !== undefined && joinable(previous.word, prepared.slice(previous.end, match.index), word)) {
      joined.push({ term: stem(previous.lower + lower), parts: [previous.term, term].filter((part): part is string => part !== undefined) });
    }
    previous = { word, lower, term, end: previousEnd };
    if (term !== undefined) entries.push({ term, word, start });
  }
  return { entries, joined };
}

/**
 * Whether two adjacent words, `between` apart, are also read as one word. A hyphen or a slash joins them
 * ("ADMP-chordin", "ADMP/chordin"); a space only when one of them is a bare number or an acronym or code ("400 mg",
 * "top 20", "ADMP chordin", "SHA256 hash"), since two plain words apart are two words ("car pet" is not "carpet", "man date" not
 * "mandate"). Digits never join digits: "CD4 5 days" and "CD4-5" are not `cd45`, "L5 0 mm" is not `l50`. A stop
 * word joins nothing.
 */
function joinable(first: string, between: string, second: string): boolean {
  if (!/^[ \t/-]{1,2}$/.test(between)) return false;
  if (/\p{N}$/u.test(first) && /^\p{N}/u.test(second)) return false;
  if (STOPWORDS.has(first.toLowerCase()) || STOPWORDS.has(second.toLowerCase())) return false;
  const numberOrAcronym = (word: string) => /^(?:\p{N}+|\p{Lu}[\p{Lu}\p{N}]+)$/u.test(word);
  return /[/-]/.test(between) || numberOrAcronym(first) || numberOrAcronym(second);
}

/** Greek letters, capital and small, and the names they are spelled out as. */
const GREEK_LETTERS = /[\u0391-\u03A9\u03B1-\u03C9\u03C2]/gu;
const GREEK_NAMES = new Map(
  Object.entries({
    α: 'alpha',
    β: 'beta',
    γ: 'gamma',
    δ: 'delta',
    ε: 'epsilon',
    ζ: 'zeta',
    η: 'eta',
    θ: 'theta',
    ι: 'iota',
    κ: 'kappa',
    λ: 'lambda',
    μ: 'mu',
    ν: 'nu',
    ξ: 'xi',
    ο: 'omicron',
    π: 'pi',
    ρ: 'rho',
    σ: 'sigma',
    ς: 'sigma',
    τ: 'tau',
    υ: 'upsilon',
    φ: 'phi',
    χ: 'chi',
    ψ: 'psi',
    ω: 'omega',
  }),
);

/**
 * A crude English stemmer: plural and `-ed`/`-ing` endings off, a final `e` off and a final `y` as `i`, so
 * "magazine"/"magazines", "study"/"studies"/"studied", "play"/"played"/"playing" meet. Latin number endings are
 * read as one ending rather than cut off, so only the two numbers of one word meet: "-um" as "-a" ("bacterium"/
 * "bacteria", "serum"/"sera"), "-us" as "-i" ("fungus"/"fungi", "nucleus"/"nuclei"), "-is" as "-es" ("analysis"/
 * "analyses"), "-ae" as "-a" ("larvae"/"larva"), "-on" of "criterion", "phenomenon", "ganglion" as "-a"; a word
 * ending in "-a" keeps it, and meets its plural in "-s" ("formula"/"formulas"). Long "-ation" and "-ession" nouns
 * meet their verbs ("phosphorylation"/"phosphorylated", "expression"/"expressed"), no other "-tion"/"-sion" word:
 * "mission" is not "miss", "station" not "state", "version" not "verse", "momentum" not "moment". Only agreement
 * between word forms matters (both sides go through it); codes and short words are left whole.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\p{N}/u.test(word)) return word;
  let result = word;
  if (result.length >= 6 && result.endsWith('is')) result = `${result.slice(0, -2)}es`;
  else if (result.length >= 5 && result.endsWith('ae')) result = result.slice(0, -1);
  if (result.endsWith('ies')) result = `${result.slice(0, -3)}i`;
  else if (/(?:s|x|z|ch|sh)es$/.test(result)) result = result.slice(0, -2);
  else if (result.endsWith('s') && !/(?:ss|us|is)$/.test(result)) result = result.slice(0, -1);
  if (result.length >= 5 && /(?:um|us)$/.test(result)) return `${result.slice(0, -2)}${result.endsWith('um') ? 'a' : 'i'}`;
  if (/(?:rion|enon|glion)$/.test(result)) return `${result.slice(0, -2)}a`;
  if (result.length >= 8 && result.endsWith('ation')) return result.slice(0, -3);
  if (result.length >= 9 && result.endsWith('ession')) return result.slice(0, -3);
  const base = (ending: string) => result.slice(0, -ending.length);
  const keepsVowel = (text: string) => text.length >= 3 && /[aeiouy]/.test(text);
  if (result.endsWith('ied')) result = `${result.slice(0, -3)}i`;
  else if (result.endsWith('ing') && keepsVowel(base('ing'))) result = undouble(base('ing'));
  else if (result.endsWith('ed') && keepsVowel(base('ed'))) result = undouble(base('ed'));
  if (result.length >= 4 && result.endsWith('e')) result = result.slice(0, -1);
  if (result.endsWith('y')) result = `${result.slice(0, -1)}i`;
  return result;
}

/** "runn" → "run", "stopp" → "stop"; "fall", "pass" and "buzz" keep their pairs. */
function undouble(text: string): string {
  return /([b-df-hj-kmnp-rtv-y])\1$/.test(text) ? text.slice(0, -1) : text;
}
