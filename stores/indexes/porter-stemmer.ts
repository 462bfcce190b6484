/**
 * The Porter stemming algorithm (M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980),
 * written from the paper's description. It maps English inflections and derivations to a common stem:
 * `connected`, `connecting`, `connection` → `connect`; `generalizations` → `gener`.
 *
 * Two refinements Porter published with his reference implementation are applied, because the usual
 * baselines (Lucene, Pyserini) stem that way and figures are only comparable on the same stems:
 * step 2 maps `bli` → `ble` (instead of `abli` → `able`) and `logi` → `log`.
 *
 * Input is expected to be one lowercase word of the letters a–z; words of one or two letters are returned
 * unchanged, as in the reference implementation.
 */
export function porterStem(word: string): string {
  if (word.length <= 2) return word;
  let stem = step1a(word);
  stem = step1b(stem);
  stem = step1c(stem);
  stem = replaceSuffix(stem, STEP2_RULES, 0);
  stem = replaceSuffix(stem, STEP3_RULES, 0);
  stem = step4(stem);
  stem = step5(stem);
  return stem;
}

// --- Internal helpers ---

/** `[suffix, replacement]`, longest suffix first: the paper applies the longest match and never falls back. */
type SuffixRule = readonly [suffix: string, replacement: string];

const STEP2_RULES = sortLongestFirst([
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
]);

const STEP3_RULES = sortLongestFirst([
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
]);

const STEP4_SUFFIXES = [
  'al',
  'ance',
  'ence',
  'er',
  'ic',
  'able',
  'ible',
  'ant',
  'ement',
  'ment',
  'ent',
  'ion',
  'ou',
  'ism',
  'ate',
  'iti',
  'ous',
  'ive',
  'ize',
].sort((left, right) => right.length - left.length);

function sortLongestFirst(rules: SuffixRule[]): SuffixRule[] {
  return rules.sort((left, right) => right[0].length - left[0].length);
}

/** A consonant is any letter but a, e, i, o, u, and `y` when it follows a consonant counts as a vowel. */
function isConsonant(word: string, index: number): boolean {
  switch (word.charCodeAt(index)) {
    case 97: // a
    case 101: // e
    case 105: // i
    case 111: // o
    case 117: // u
      return false;
    case 121: // y
      return index === 0 ? true : !isConsonant(word, index - 1);
    default:
      return true;
  }
}

/** m in the paper's form [C](VC)^m[V]: the number of vowel-run → consonant-run transitions in `word[0, end)`. */
function measure(word: string, end = word.length): number {
  let count = 0;
  let index = 0;
  while (index < end && isConsonant(word, index)) index++;
  while (index < end) {
    while (index < end && !isConsonant(word, index)) index++;
    if (index >= end) break;
    count++;
    while (index < end && isConsonant(word, index)) index++;
  }
  return count;
}

function containsVowel(word: string, end = word.length): boolean {
  for (let index = 0; index < end; index++) if (!isConsonant(word, index)) return true;
  return false;
}

/** *d: the word ends with a double consonant. */
function endsWithDoubleConsonant(word: string, end = word.length): boolean {
  return end >= 2 && word.charCodeAt(end - 1) === word.charCodeAt(end - 2) && isConsonant(word, end - 1);
}

/** *o: the word ends consonant–vowel–consonant, the last consonant not w, x or y (so `hop` but not `snow`). */
function endsWithConsonantVowelConsonant(word: string, end = word.length): boolean {
  if (end < 3) return false;
  if (!isConsonant(word, end - 3) || isConsonant(word, end - 2) || !isConsonant(word, end - 1)) return false;
  const last = word[end - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

/** Plurals: caresses → caress, ponies → poni, cats → cat; a double s stays. */
function step1a(word: string): string {
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return word.slice(0, -2);
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

/** Past tenses and participles: agreed → agree, plastered → plaster, motoring → motor, hopping → hop. */
function step1b(word: string): string {
  if (word.endsWith('eed')) {
    return measure(word, word.length - 3) > 0 ? word.slice(0, -1) : word;
  }
  let stem: string | undefined;
  if (word.endsWith('ed') && containsVowel(word, word.length - 2)) stem = word.slice(0, -2);
  else if (word.endsWith('ing') && containsVowel(word, word.length - 3)) stem = word.slice(0, -3);
  if (stem === undefined) return word;
  // Removing the ending can leave a stem that needs tidying so later steps see a regular form.
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsWithDoubleConsonant(stem)) {
    const last = stem[stem.length - 1];
    return last === 'l' || last === 's' || last === 'z' ? stem : stem.slice(0, -1);
  }
  if (measure(stem) === 1 && endsWithConsonantVowelConsonant(stem)) return `${stem}e`;
  return stem;
}

/** happy → happi when the stem has a vowel, so `happy` and `happiness` meet; sky stays. */
function step1c(word: string): string {
  if (word.endsWith('y') && containsVowel(word, word.length - 1)) return `${word.slice(0, -1)}i`;
  return word;
}

/** Apply the longest matching rule when the remaining stem has m > minimumMeasure. */
function replaceSuffix(word: string, rules: readonly SuffixRule[], minimumMeasure: number): string {
  for (const [suffix, replacement] of rules) {
    if (!word.endsWith(suffix)) continue;
    const stemLength = word.length - suffix.length;
    return measure(word, stemLength) > minimumMeasure ? word.slice(0, stemLength) + replacement : word;
  }
  return word;
}

/** Strip a final derivational suffix when at least two syllables (m > 1) remain; -ion only after s or t. */
function step4(word: string): string {
  for (const suffix of STEP4_SUFFIXES) {
    if (!word.endsWith(suffix)) continue;
    const stemLength = word.length - suffix.length;
    if (measure(word, stemLength) <= 1) return word;
    if (suffix === 'ion') {
      const before = word[stemLength - 1];
      if (before !== 's' && before !== 't') return word;
    }
    return word.slice(0, stemLength);
  }
  return word;
}

/** A final e goes when it does not protect a short syllable (probate → probat, rate stays); -ll → -l on long words. */
function step5(word: string): string {
  let result = word;
  if (result.endsWith('e')) {
    const stemLength = result.length - 1;
    const stemMeasure = measure(result, stemLength);
    if (stemMeasure > 1 || (stemMeasure === 1 && !endsWithConsonantVowelConsonant(result, stemLength))) {
      result = result.slice(0, stemLength);
    }
  }
  if (result.endsWith('l') && endsWithDoubleConsonant(result) && measure(result) > 1) result = result.slice(0, -1);
  return result;
}
