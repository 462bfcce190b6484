/**
 * What a lenient reader of a prompt sees: a model or parser that folds compatibility characters (NFKC),
 * ignores invisible characters (default-ignorable code points) and decodes HTML entities. Applied in both
 * orders, so a frame that holds against this reader holds whichever it does first.
 */

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'", sol: '/', nbsp: '\u00a0' };

/** Decode HTML character references (named, decimal, hex; with or without the final `;`), once. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);?/g, (match, body: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      return code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return NAMED[body.toLowerCase()] ?? match;
  });
}

export function withoutIgnorables(text: string): string {
  return text.replace(/\p{Default_Ignorable_Code_Point}/gu, '');
}

/** The views of `text` a lenient reader may take. */
export function lenientViews(text: string): string[] {
  const first = decodeEntities(withoutIgnorables(text.normalize('NFKC')));
  const second = withoutIgnorables(decodeEntities(text).normalize('NFKC'));
  return [first, second, withoutIgnorables(first.normalize('NFKC'))];
}

/** How many closing tags `</name` (any case, spaces allowed inside) the most lenient view of `text` holds. */
export function closersSeen(text: string, name: string): number {
  const pattern = new RegExp(`<\\s*/\\s*${name}`, 'gi');
  return Math.max(...lenientViews(text).map((view) => view.match(pattern)?.length ?? 0));
}

/** How many opening tags `<name` the most lenient view of `text` holds. */
export function openersSeen(text: string, name: string): number {
  const pattern = new RegExp(`<\\s*${name}`, 'gi');
  return Math.max(...lenientViews(text).map((view) => view.match(pattern)?.length ?? 0));
}
