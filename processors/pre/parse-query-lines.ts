/**
 * Turning a chat model's free text into search queries. Models add numbering, bullets, quotes, bold,
 * code fences, a preamble ("Here are the sub-questions:") and a closing explanation however clearly they are
 * told not to; this module keeps the queries and nothing else.
 */

export interface ParsedQueryLines {
  /** The queries in the order the model gave them, de-duplicated, at most `maxQueries`. */
  queries: string[];
  /** Distinct queries that were cut because the model returned more than `maxQueries`. */
  overLimit: number;
  /** Queries left out because they repeated an earlier one (ignoring case, spacing and end punctuation). */
  duplicates: number;
}

/**
 * Extract one query per line (or per JSON array item) from a model's output.
 *
 * @example parseQueryLines('Here you go:\n1. "What is X?"\n2) what is x\n- How is Y made?\nThese cover both parts.', { maxQueries: 5 })
 *          // → { queries: ['What is X?', 'How is Y made?'], overLimit: 0, duplicates: 1 }
 */
export function parseQueryLines(output: string, options: { maxQueries: number }): ParsedQueryLines {
  const text = stripCodeFences(output);
  const candidates = (fromJsonArray(text) ?? fromLines(text)).map(cleanQuery).filter(isUsableQuery);
  const seen = new Set<string>();
  const distinct: string[] = [];
  let duplicates = 0;
  for (const query of candidates) {
    const key = comparisonKey(query);
    if (seen.has(key)) {
      duplicates++;
      continue;
    }
    seen.add(key);
    distinct.push(query);
  }
  const maxQueries = Math.max(1, Math.floor(options.maxQueries));
  return { queries: distinct.slice(0, maxQueries), overLimit: Math.max(0, distinct.length - maxQueries), duplicates };
}

/**
 * Extract a hypothetical passage (HyDE) from a model's output: the prose without fences, preamble,
 * label, wrapping quotes or closing note. Returns `''` when nothing usable is left.
 */
export function parsePassage(output: string): string {
  const lines = stripCodeFences(output)
    .split(/\r?\n/)
    .map((line) => line.trim());
  while (lines.length > 0 && (lines[0] === '' || isPassagePreamble(lines[0]))) lines.shift();
  while (lines.length > 0 && (lines[lines.length - 1] === '' || /^(?:\*\*)?notes?\b\s*[:\-–]/i.test(lines[lines.length - 1]))) lines.pop();
  const label = /^(?:hypothetical\s+)?(?:passage|answer|document)\s*:\s*/i;
  const passage = unwrapQuotes(unwrapQuotes(lines.join('\n').replace(label, '')).replace(label, ''))
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return isUsableQuery(passage) ? passage : '';
}

/** Two queries are the same search when they differ only in case, spacing, or end punctuation. */
export function comparisonKey(query: string): string {
  return query
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s?.!;:,]+$/u, '')
    .trim();
}

// --- Internal helpers ---

/** A list marker at the start of a line: bullets, `1.` `1)` `(1)` `[1]` `a)`, or a label such as `Q1:`. */
const LIST_MARKER =
  /^(?:[-*•+–—·▪◦‣]|\(?\d{1,3}\s*[.):\]]|\(\d{1,3}\)|\[\d{1,3}\]|[a-h]\)|#\d{1,3}[.:)]?|(?:q|question|query|sub-?question|sub-?query|paraphrase|rewrite)\s*#?\d{1,3}\s*[.):\-–]?)\s+/i;

/** Opening words of a line that talks about the answer instead of being part of it. */
const PREAMBLE = /^(?:sure|certainly|okay|ok|of course|absolutely|great|here\s+(?:are|is)|below\s+(?:are|is)|the\s+following)\b/i;
const EXPLANATION =
  /^(?:notes?\b|explanation\b|these\b|this\b|each\b|together\b|i\s+(?:have|hope|broke|split|rewrote)\b|i've\b|by\s+(?:splitting|breaking|searching|rewriting)\b|the\s+(?:above|sub-?questions|queries|paraphrases)\b)/i;
const REFUSAL = /^(?:i'?m\s+sorry|i\s+am\s+sorry|sorry\b|i\s+(?:cannot|can'?t|am\s+unable|'m\s+unable|won'?t)\b|as\s+an\s+ai\b)/i;
const LABEL =
  /^(?:(?:rewritten|improved|search|reformulated|alternative|final)\s+)?(?:query|question|sub-?question|sub-?query|paraphrase|rewrite)(?:\s*#?\d{1,3})?\s*[:\-–]\s*/i;

function stripCodeFences(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !/^\s*(?:```|~~~)/.test(line))
    .join('\n');
}

/** A model asked for lines sometimes answers with a JSON array (or an object holding one); accept it. */
function fromJsonArray(text: string): string[] | undefined {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  const list = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? Object.values(value).find(Array.isArray) : undefined;
  if (!Array.isArray(list)) return undefined;
  return list.filter((item): item is string => typeof item === 'string');
}

function fromLines(text: string): string[] {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.replace(/\*\*|__/g, '').trim())
    .filter((line) => line !== '' && !/^(?:#{1,6}\s|[-=*_]{3,}$)/.test(line));
  const marked = lines.filter((line) => LIST_MARKER.test(line));
  // When the model used a list, the list is the answer: unmarked lines are its preamble or commentary.
  if (marked.length > 0) return marked.map((line) => line.replace(LIST_MARKER, ''));
  const items: string[] = [];
  for (const line of lines) {
    if (isPreamble(line)) continue;
    if (EXPLANATION.test(line)) {
      if (items.length > 0) break;
      continue;
    }
    items.push(line);
  }
  return items;
}

function isPreamble(line: string): boolean {
  return PREAMBLE.test(line) || line.endsWith(':');
}

/** Stricter than `isPreamble`: a passage may well open with "The following steps…". */
function isPassagePreamble(line: string): boolean {
  return line.endsWith(':') || (/^(?:sure|certainly|okay|ok|of course|absolutely)\b/i.test(line) && line.length < 80);
}

function cleanQuery(raw: string): string {
  let query = raw
    .replace(/\*\*|__/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  query = unwrapQuotes(query.replace(LABEL, ''));
  return query.replace(/\s+/g, ' ').trim();
}

const QUOTE_PAIRS: Record<string, string> = { '"': '"', "'": "'", '`': '`', '“': '”', '‘': '’', '«': '»', '„': '“' };

function unwrapQuotes(text: string): string {
  let result = text.trim();
  for (;;) {
    const closing = QUOTE_PAIRS[result[0]];
    if (closing === undefined || result.length < 2 || result[result.length - 1] !== closing) {
      // A quoted query followed by its own punctuation: "What is X?". → What is X?
      const quoted = /^(["“«`])(.+)(["”»`])[.,;]?$/u.exec(result);
      if (quoted && QUOTE_PAIRS[quoted[1]] === quoted[3]) return quoted[2].trim();
      return result;
    }
    result = result.slice(1, -1).trim();
  }
}

function isUsableQuery(query: string): boolean {
  return /[\p{L}\p{N}]/u.test(query) && !REFUSAL.test(query);
}
