import type { JsonValue } from '../../document.ts';
import { AxonError } from '../../errors.ts';
import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';
import { CsvParser } from './csv-parser.ts';

export interface CsvLoaderOptions {
  /** Field separator. @default ',' (a tab for the TSV loader) */
  delimiter?: string;
  /** Columns that make the text, joined by line breaks; the others go into metadata. @default every column, as `name: value` lines */
  textColumns?: string[];
}

/**
 * CSV (`.csv`) and TSV (`.tsv`): one document per row, read as a stream so a file may be of any size. The
 * first row names the columns. Each document carries `rowNumber` (1-based, the header not counted). Without
 * `textColumns`, the text is every non-empty cell as a `column: value` line, which keeps the column names
 * searchable; with it, those columns are the text and the others become metadata (as strings).
 */
export class CsvLoader implements Loader {
  readonly name = 'csv-loader';
  readonly streaming = true;

  constructor(private readonly options: CsvLoaderOptions = {}) {}

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    const parser = new CsvParser(this.options.delimiter ?? (source.extension === 'tsv' ? '\t' : ','));
    let header: string[] | undefined;
    let rowNumber = 0;
    let ragged = 0;
    const toDocument = (row: string[]): LoadedDocument | undefined => {
      if (!header) {
        header = row.map((name, index) => name.trim() || `column${index + 1}`);
        const missing = (this.options.textColumns ?? []).filter((column) => !header!.includes(column));
        if (missing.length > 0) {
          throw new AxonError('INGEST_FAILED', `${source.sourceName} has no column ${missing.map((column) => `"${column}"`).join(', ')} (columns: ${header.join(', ')}).`, {
            component: this.name,
            fix: 'Name existing columns in csv.textColumns.',
          });
        }
        return undefined;
      }
      rowNumber += 1;
      if (row.length !== header.length) ragged += 1;
      return this.rowToDocument(header, row, rowNumber);
    };
    for await (const piece of source.textStream()) {
      for (const row of parser.push(piece)) {
        const document = toDocument(row);
        if (document) yield document;
      }
    }
    for (const row of parser.end()) {
      const document = toDocument(row);
      if (document) yield document;
    }
    if (parser.unterminatedQuote) source.warn('the file ends inside a quoted field (a closing " is missing); the last row may hold more than one line.');
    if (ragged > 0) source.warn(`${ragged} row${ragged === 1 ? ' has' : 's have'} a different number of fields than the header.`);
  }

  private rowToDocument(header: string[], row: string[], rowNumber: number): LoadedDocument | undefined {
    const textColumns = this.options.textColumns;
    const metadata: Record<string, JsonValue> = {};
    let content: string;
    if (textColumns === undefined) {
      content = header
        .map((name, index) => [name, (row[index] ?? '').trim()] as const)
        .filter(([, value]) => value !== '')
        .map(([name, value]) => `${name}: ${value}`)
        .join('\n');
    } else {
      content = textColumns.map((column) => (row[header.indexOf(column)] ?? '').trim()).filter((value) => value !== '').join('\n');
      header.forEach((name, index) => {
        if (!textColumns.includes(name) && row[index] !== undefined) metadata[name] = row[index];
      });
    }
    if (content === '') return undefined;
    metadata.rowNumber = rowNumber;
    return { content, metadata };
  }
}
