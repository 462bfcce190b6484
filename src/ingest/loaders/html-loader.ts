import type { JsonValue } from '../../document.ts';
import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';
import { lazyModule } from '../../runtime/lazy-module.ts';

/** Elements whose content a reader never sees as page text, or that repeat on every page of a site. */
const DROPPED_ELEMENTS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'nav',
  'header',
  'footer',
  'svg',
  'canvas',
  'iframe',
  'object',
  'button',
  'select',
  'form',
]);

/** Elements that start a new block of text. */
const BLOCK_ELEMENTS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tr',
  'ul',
  'caption',
]);

/**
 * HTML (`.html`, `.htm`, `.xhtml`): the visible text only. Scripts, styles, the head, navigation, page
 * headers and footers, forms and elements marked `hidden` or `aria-hidden="true"` are dropped; block elements
 * become paragraph breaks; `<pre>` keeps its layout. `title` (from `<title>`, else the first `<h1>`),
 * `description` (meta) and `language` (`<html lang>`) go into metadata.
 */
export class HtmlLoader implements Loader {
  readonly name = 'html-loader';

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    const { text, metadata } = await htmlToText(await source.text());
    yield { content: text, metadata };
  }
}

/** The visible text of an HTML page and what its head says about it. Loads `htmlparser2` on first use. */
export async function htmlToText(html: string): Promise<{ text: string; metadata: Record<string, JsonValue> }> {
  const { Parser } = await htmlParser.load();
  const output: string[] = [];
  /** Whether the last piece of output came from `<pre>`, whose spaces are kept. */
  let lastFromPre = false;
  const atLineStart = () => output.length === 0 || output[output.length - 1].endsWith('\n');
  const pushBreak = (text: string) => {
    if (!lastFromPre && output.length > 0) output[output.length - 1] = output[output.length - 1].replace(/[ \t]+$/, '');
    output.push(text);
    lastFromPre = false;
  };
  const pushText = (text: string, pre: boolean) => {
    const piece = pre ? text : atLineStart() ? text.replace(/\s+/g, ' ').trimStart() : text.replace(/\s+/g, ' ');
    if (piece === '') return;
    output.push(piece);
    lastFromPre = pre;
  };
  let droppedDepth = 0;
  let preDepth = 0;
  let title = '';
  let inTitle = false;
  let firstHeading = '';
  let inFirstHeading = false;
  let description: string | undefined;
  let language: string | undefined;
  const dropping: boolean[] = [];
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'html' && attributes.lang) language = attributes.lang;
        if (name === 'meta' && attributes.name?.toLowerCase() === 'description' && attributes.content) description = attributes.content.trim();
        if (name === 'title') inTitle = true;
        const hidden = 'hidden' in attributes || attributes['aria-hidden'] === 'true' || /display\s*:\s*none/i.test(attributes.style ?? '');
        const drop = DROPPED_ELEMENTS.has(name) || hidden;
        dropping.push(drop);
        if (drop) droppedDepth += 1;
        if (droppedDepth > 0) return;
        if (name === 'pre') preDepth += 1;
        if (name === 'h1' && firstHeading === '') inFirstHeading = true;
        if (name === 'br') pushBreak('\n');
        else if ((name === 'td' || name === 'th') && !atLineStart()) output.push('\t');
        else if (BLOCK_ELEMENTS.has(name)) pushBreak('\n\n');
      },
      ontext(data) {
        if (inTitle) title += data;
        if (droppedDepth > 0) return;
        if (inFirstHeading) firstHeading += data;
        pushText(data, preDepth > 0);
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        const wasDropping = dropping.pop() ?? false;
        if (wasDropping) {
          droppedDepth -= 1;
          return;
        }
        if (droppedDepth > 0) return;
        if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
        if (name === 'h1') inFirstHeading = false;
        if (BLOCK_ELEMENTS.has(name)) pushBreak('\n\n');
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const text = output
    .join('')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\s+$/g, '');
  const metadata: Record<string, JsonValue> = {};
  const pageTitle = title.replace(/\s+/g, ' ').trim() || firstHeading.replace(/\s+/g, ' ').trim();
  if (pageTitle) metadata.title = pageTitle;
  if (description) metadata.description = description;
  if (language) metadata.language = language;
  return { text, metadata };
}

// --- Internal helpers ---

const htmlParser = lazyModule('htmlparser2', 'html-loader', () => import('htmlparser2'));
