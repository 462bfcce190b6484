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
    let columns: CsvColumns | undefined;
    let rowNumber = 0;
    let ragged = 0;
    for await (const row of parseRows(parser, source.textStream())) {
      if (!columns) {
        columns = this.columnsOf(row, source.sourceName);
        continue;
      }
      rowNumber += 1;
      if (row.length !== columns.header.length) ragged += 1;
      const document = rowToDocument(columns, row, rowNumber);
      if (document) yield document;
    }
    if (parser.unterminatedQuote) source.warn('the file ends inside a quoted field (a closing " is missing); the last row may hold more than one line.');
    if (ragged > 0) source.warn(`${ragged} row${ragged === 1 ? ' has' : 's have'} a different number of fields than the header.`);
  }

  /** Read the header row once: the column names, and which positions make the text and which the metadata. */
  private columnsOf(row: string[], sourceName: string): CsvColumns {
    const header = row.map((name, index) => name.trim() || `column${index + 1}`);
    const textColumns = this.options.textColumns;
    if (textColumns === undefined) return { header };
    const missing = textColumns.filter((column) => !header.includes(column));
    if (missing.length > 0) {
      throw new AxonError(
        'INGEST_FAILED',
        `${sourceName} has no column ${missing.map((column) => `"${column}"`).join(', ')} (columns: ${header.join(', ')}).`,
        {
          component: this.name,
          fix: 'Name existing columns in csv.textColumns.',
        },
      );
    }
    return {
      header,
      text: {
        textIndexes: textColumns.map((column) => header.indexOf(column)),
        metadataIndexes: header.flatMap((name, index) => (textColumns.includes(name) ? [] : [index])),
      },
    };
  }
}

// --- Internal helpers ---

interface CsvColumns {
  header: string[];
  /** Set when `textColumns` is given: the header positions of the text columns (in their order) and of the others. */
  text?: { textIndexes: number[]; metadataIndexes: number[] };
}

async function* parseRows(parser: CsvParser, pieces: AsyncIterable<string>): AsyncIterable<string[]> {
  for await (const piece of pieces) yield* parser.push(piece);
  yield* parser.end();
}

function rowToDocument({ header, text }: CsvColumns, row: string[], rowNumber: number): LoadedDocument | undefined {
  const metadata: Record<string, JsonValue> = {};
  let content: string;
  if (text === undefined) {
    content = header
      .map((name, index) => [name, (row[index] ?? '').trim()] as const)
      .filter(([, value]) => value !== '')
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
  } else {
    content = text.textIndexes
      .map((index) => (row[index] ?? '').trim())
      .filter((value) => value !== '')
      .join('\n');
    for (const index of text.metadataIndexes) if (row[index] !== undefined) metadata[header[index]] = row[index];
  }
  if (content === '') return undefined;
  metadata.rowNumber = rowNumber;
  return { content, metadata };
}
