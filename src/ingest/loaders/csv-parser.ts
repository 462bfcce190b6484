/**
 * An incremental CSV parser following RFC 4180: fields separated by a delimiter, records by CRLF (LF and a
 * lone CR are accepted too), fields optionally enclosed in double quotes, a doubled quote inside a quoted
 * field standing for one quote, and delimiters and line breaks allowed inside quoted fields. Text is pushed in
 * pieces of any size, so a file is parsed as it streams. Written here because the format is small and exact,
 * and a dependency would add more surface than these few lines.
 *
 * Lenient where the RFC is silent, as spreadsheet exports need: a quote inside an unquoted field is kept as
 * a character, text after a closing quote is appended to the field, and blank lines are skipped.
 */
export class CsvParser {
  private records: string[][] = [];
  private record: string[] = [];
  private field = '';
  private state: 'start' | 'unquoted' | 'quoted' | 'quoteInQuoted' = 'start';
  private pendingCarriageReturn = false;

  constructor(private readonly delimiter = ',') {}

  /** Parse the next piece of text; returns the records it completed. */
  push(text: string): string[][] {
    const delimiter = this.delimiter;
    for (let index = 0; index < text.length; index++) {
      const character = text[index];
      if (this.pendingCarriageReturn) {
        this.pendingCarriageReturn = false;
        // The LF of a CRLF pair: the record already ended at the CR.
        if (character === '\n') continue;
      }
      switch (this.state) {
        case 'quoted':
          if (character === '"') this.state = 'quoteInQuoted';
          else this.field += character;
          break;
        case 'quoteInQuoted':
          if (character === '"') {
            this.field += '"';
            this.state = 'quoted';
          } else if (character === delimiter) this.endField();
          else if (character === '\n' || character === '\r') this.endRecord(character);
          else {
            this.field += character;
            this.state = 'unquoted';
          }
          break;
        default:
          if (character === delimiter) this.endField();
          else if (character === '\n' || character === '\r') this.endRecord(character);
          else if (character === '"' && this.state === 'start') this.state = 'quoted';
          else {
            this.field += character;
            this.state = 'unquoted';
          }
      }
    }
    return this.take();
  }

  /** Finish parsing; returns the last record, if any. A quoted field left open is kept as it stands. */
  end(): string[][] {
    if (this.state !== 'start' || this.field !== '' || this.record.length > 0) this.endRecord('\n');
    return this.take();
  }

  /** True when the text ended inside a quoted field (a missing closing quote). */
  get unterminatedQuote(): boolean {
    return this.state === 'quoted';
  }

  private endField(): void {
    this.record.push(this.field);
    this.field = '';
    this.state = 'start';
  }

  private endRecord(character: string): void {
    this.endField();
    if (character === '\r') this.pendingCarriageReturn = true;
    const blank = this.record.length === 1 && this.record[0] === '';
    if (!blank) this.records.push(this.record);
    this.record = [];
  }

  private take(): string[][] {
    const records = this.records;
    this.records = [];
    return records;
  }
}
