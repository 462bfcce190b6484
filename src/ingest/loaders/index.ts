import type { Loader } from '../types.ts';
import { CsvLoader, type CsvLoaderOptions } from './csv-loader.ts';
import { HtmlLoader } from './html-loader.ts';
import { JsonLoader, type JsonLoaderOptions } from './json-loader.ts';
import { MarkdownLoader } from './markdown-loader.ts';
import { PdfLoader } from './pdf-loader.ts';
import { TextLoader } from './text-loader.ts';

export { CsvLoader, type CsvLoaderOptions } from './csv-loader.ts';
export { CsvParser } from './csv-parser.ts';
export { HtmlLoader, htmlToText } from './html-loader.ts';
export { JsonLoader, type JsonLoaderOptions } from './json-loader.ts';
export { MarkdownLoader, extractFrontMatter } from './markdown-loader.ts';
export { PdfLoader } from './pdf-loader.ts';
export { TextLoader } from './text-loader.ts';

/** Options of the built-in loaders that take any. */
export interface DefaultLoaderOptions {
  json?: JsonLoaderOptions;
  csv?: CsvLoaderOptions;
}

/**
 * The built-in loaders by lower-case extension (without the dot). Pass your own entries through
 * `ingestPaths(…, { loaders: { rst: myLoader } })` to add or replace formats.
 */
export function createDefaultLoaders(options: DefaultLoaderOptions = {}): Record<string, Loader> {
  const text = new TextLoader();
  const markdown = new MarkdownLoader();
  const html = new HtmlLoader();
  const jsonLines = new JsonLoader('jsonl', options.json);
  const csv = new CsvLoader(options.csv);
  return {
    txt: text,
    text,
    log: text,
    md: markdown,
    markdown,
    mdx: markdown,
    html: html,
    htm: html,
    xhtml: html,
    pdf: new PdfLoader(),
    json: new JsonLoader('json', options.json),
    jsonl: jsonLines,
    ndjson: jsonLines,
    csv,
    tsv: csv,
  };
}
