/**
 * Reading a list of ids out of a chat model's reply. Asked for "a JSON array only", models still wrap it in a
 * code fence, put prose around it, return an object (`{"ids": [...]}`), an array of objects, single quotes, bare
 * words or a trailing comma. This finds the list; deciding which ids are real is the caller's job.
 */

/**
 * The ids the model listed, in its order, as strings (numbers are stringified); `undefined` when no list of ids
 * can be found. When the reply holds several lists, the first one containing a known id wins, else the first.
 *
 * @example parseRankedIds('Sure:\n```json\n{"ids": ["k3m9", "a2b4"]}\n```') // → ['k3m9', 'a2b4']
 */
export function parseRankedIds(output: string, isKnown: (id: string) => boolean = () => true): string[] | undefined {
  const lists: string[][] = [];
  const fenced = /```[\w-]*\s*\n?([\s\S]*?)```/.exec(output);
  for (const text of fenced ? [fenced[1], output] : [output]) {
    const whole = parseLenient(text.trim());
    const fromWhole = whole === undefined ? undefined : idsFrom(whole);
    if (fromWhole) lists.push(fromWhole);
    for (const fragment of bracketedFragments(text)) {
      const value = parseLenient(fragment);
      const ids = value === undefined ? undefined : idsFrom(value);
      if (ids) lists.push(ids);
    }
  }
  return lists.find((ids) => ids.some(isKnown)) ?? lists[0];
}

/** The form ids are compared in: trimmed, lower case, without quotes, brackets, `#` or an `id:` label. */
export function normalizeId(raw: string): string {
  return raw
    .trim()
    .replace(/^["'`[(<#]+|["'`\])>.,;]+$/g, '')
    .replace(/^(?:document|doc|id)\s*[:#=]?\s*/i, '')
    .replace(/^["'`]+|["'`]+$/g, '')
    .trim()
    .toLowerCase();
}

// --- Internal helpers ---

const LIST_KEYS = ['ids', 'ranking', 'ranked', 'rankedids', 'ranked_ids', 'order', 'documents', 'results', 'relevant', 'selected'];

function idsFrom(value: unknown): string[] | undefined {
  if (Array.isArray(value)) {
    const ids: string[] = [];
    for (const item of value) {
      if (typeof item === 'string' || (typeof item === 'number' && Number.isFinite(item))) ids.push(String(item));
      else if (typeof item === 'object' && item !== null) {
        const id = (item as Record<string, unknown>).id ?? (item as Record<string, unknown>).ID ?? (item as Record<string, unknown>).documentId;
        if (typeof id === 'string' || typeof id === 'number') ids.push(String(id));
      }
    }
    return ids.length > 0 || value.length === 0 ? ids : undefined;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    const named = entries.find(([key, item]) => LIST_KEYS.includes(key.toLowerCase()) && Array.isArray(item));
    const list = named?.[1] ?? entries.find(([, item]) => Array.isArray(item))?.[1];
    return list === undefined ? undefined : idsFrom(list);
  }
  return undefined;
}

/** JSON, then the same text with the usual model slips repaired: single quotes, bare words, trailing commas. */
function parseLenient(text: string): unknown {
  if (!/^[[{]/.test(text)) return undefined;
  for (const candidate of [text, repair(text)]) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next form
    }
  }
  return undefined;
}

function repair(text: string): string {
  return text
    .replace(/'([^'"\\]*)'/g, '"$1"')
    .replace(/([[,{:]\s*)([A-Za-z_][\w-]*)(?=\s*[,\]}:])/g, (match, before: string, word: string) =>
      ['true', 'false', 'null'].includes(word) ? match : `${before}"${word}"`,
    )
    .replace(/,\s*([\]}])/g, '$1');
}

/** Every balanced `[...]` or `{...}` in the text, outermost first, skipping over quoted strings. */
function bracketedFragments(text: string): string[] {
  const fragments: string[] = [];
  let index = 0;
  while (index < text.length) {
    const start = text.slice(index).search(/[[{]/);
    if (start < 0) break;
    const open = index + start;
    const end = matchingBracket(text, open);
    if (end < 0) {
      index = open + 1;
      continue;
    }
    fragments.push(text.slice(open, end + 1));
    index = end + 1;
  }
  return fragments;
}

function matchingBracket(text: string, open: number): number {
  const stack: string[] = [];
  let quote: string | undefined;
  for (let index = open; index < text.length; index++) {
    const character = text[index];
    if (quote) {
      if (character === '\\') index++;
      else if (character === quote) quote = undefined;
      continue;
    }
    if (character === '"') quote = character;
    else if (character === '[' || character === '{') stack.push(character === '[' ? ']' : '}');
    else if (character === ']' || character === '}') {
      if (stack.pop() !== character) return -1;
      if (stack.length === 0) return index;
    }
  }
  return -1;
}
