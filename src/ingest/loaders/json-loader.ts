import { MAX_METADATA_DEPTH, type JsonValue } from '../../document.ts';
import { AxonError } from '../../errors.ts';
import { nestsDeeperThan, toJsonValue } from '../json-value.ts';
import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';

export interface JsonLoaderOptions {
  /** The field holding the text, or several joined by a blank line; dotted paths reach nested fields. @default the first of text, content, body present */
  textField?: string | string[];
  /**
   * Fields copied into metadata. @default every top-level string, number and boolean field that is not text, and
   * the eligibility fields whatever their type (`tenantId`, `allowedRoles`, `supersedes`, `facts`)
   */
  metadataFields?: string[];
}

const DEFAULT_TEXT_FIELDS = ['text', 'content', 'body'];

/** How deep a field's value may nest: a metadata field sits one level below the metadata object itself. */
const MAX_FIELD_LEVELS = MAX_METADATA_DEPTH - 1;
/** Records named one by one in the warnings about too-deep fields; the rest are counted. */
const MAX_DEPTH_WARNINGS = 5;

/** Record fields kept in metadata even when they are arrays or objects: eligibility (SPEC §7), supersession and facts. */
const STRUCTURED_FIELDS = new Set(['tenantId', 'allowedRoles', 'supersedes', 'facts']);

/**
 * JSON (`.json`) and JSON Lines (`.jsonl`, `.ndjson`): one document per record. A `.json` file holds an array
 * of records or a single record; a JSON Lines file holds one record per line and is read as a stream, so it
 * may be of any size. A record that is a plain string is its own text. Each document carries `recordIndex`
 * (0-based) and, for JSON Lines, `lineNumber`. Malformed lines and records without text are skipped with a
 * warning in the summary.
 */
export class JsonLoader implements Loader {
  readonly name: string;
  readonly streaming: boolean;

  constructor(
    private readonly format: 'json' | 'jsonl',
    private readonly options: JsonLoaderOptions = {},
  ) {
    this.name = format === 'json' ? 'json-loader' : 'jsonl-loader';
    this.streaming = format === 'jsonl';
  }

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    let withoutText = 0;
    let tooDeep = 0;
    const toDocument = (record: unknown, metadata: Record<string, JsonValue>): LoadedDocument | undefined => {
      const dropped: string[] = [];
      const document = this.recordToDocument(record, metadata, dropped);
      if (!document) withoutText += 1;
      else if (dropped.length > 0) {
        tooDeep += 1;
        if (tooDeep <= MAX_DEPTH_WARNINGS) {
          const where = metadata.lineNumber !== undefined ? `line ${metadata.lineNumber}` : `record ${metadata.recordIndex}`;
          const fields = dropped.map((field) => `"${field}"`).join(', ');
          source.warn(
            `${where}: ${dropped.length === 1 ? 'field' : 'fields'} ${fields} ${dropped.length === 1 ? 'nests' : 'nest'} deeper than ${MAX_FIELD_LEVELS} levels, so ${dropped.length === 1 ? 'it was' : 'they were'} left out of the metadata (the record's text was kept).`,
          );
        }
      }
      return document;
    };
    if (this.format === 'json') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(await source.text());
      } catch (error) {
        throw new AxonError('INGEST_FAILED', `${source.sourceName} is not valid JSON (${(error as Error).message}).`, {
          component: this.name,
          fix: 'Fix the JSON, or use .jsonl for one record per line.',
        });
      }
      const records = Array.isArray(parsed) ? parsed : [parsed];
      for (let recordIndex = 0; recordIndex < records.length; recordIndex++) {
        const document = toDocument(records[recordIndex], { recordIndex });
        if (document) yield document;
      }
    } else {
      let lineNumber = 0;
      let recordIndex = 0;
      let malformed = 0;
      for await (const line of source.lines()) {
        lineNumber += 1;
        if (line.trim() === '') continue;
        let record: unknown;
        try {
          record = JSON.parse(line);
        } catch (error) {
          malformed += 1;
          if (malformed <= 5) source.warn(`line ${lineNumber} is not valid JSON (${(error as Error).message}); skipped.`);
          continue;
        }
        const document = toDocument(record, { recordIndex: recordIndex++, lineNumber });
        if (document) yield document;
      }
      if (malformed > 5) source.warn(`${malformed} malformed lines in all were skipped.`);
      if (malformed > 0 && recordIndex === 0) {
        throw new AxonError('INGEST_FAILED', `${source.sourceName} holds no valid JSON line.`, { component: this.name, fix: 'Write one JSON value per line.' });
      }
    }
    if (tooDeep > MAX_DEPTH_WARNINGS)
      source.warn(`${tooDeep} records in all had fields nested deeper than ${MAX_FIELD_LEVELS} levels left out of their metadata.`);
    if (withoutText > 0) source.warn(`${withoutText} record${withoutText === 1 ? '' : 's'} without text in ${this.describeTextField()} skipped.`);
  }

  /** The record's document; the names of fields left out because they nest too deep are added to `tooDeep`. */
  private recordToDocument(record: unknown, position: Record<string, JsonValue>, tooDeep: string[]): LoadedDocument | undefined {
    if (typeof record === 'string') return record.trim() === '' ? undefined : { content: record, metadata: position };
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
    const fields = this.options.textField === undefined ? DEFAULT_TEXT_FIELDS.filter((field) => field in record).slice(0, 1) : [this.options.textField].flat();
    const texts = fields
      .map((field) => readPath(record, field))
      .filter((value): value is string | number => (typeof value === 'string' && value.trim() !== '') || typeof value === 'number');
    if (texts.length === 0) return undefined;
    const metadata: Record<string, JsonValue> = {};
    const metadataFields = this.options.metadataFields ?? Object.keys(record).filter((key) => !fields.includes(key));
    for (const field of metadataFields) {
      const value = readPath(record, field);
      // Deeper than metadata may nest (a store refuses it): said per record, whether or not the field would be kept.
      if (nestsDeeperThan(value, MAX_FIELD_LEVELS)) {
        tooDeep.push(field);
        continue;
      }
      // Arrays and objects are left out by default, except the fields eligibility and conflict detection read.
      if (this.options.metadataFields === undefined && (value === null || typeof value === 'object') && !STRUCTURED_FIELDS.has(field)) continue;
      const converted = toJsonValue(value);
      if (converted !== undefined) metadata[field] = converted;
    }
    return { content: texts.map(String).join('\n\n'), metadata: { ...metadata, ...position } };
  }

  private describeTextField(): string {
    return this.options.textField === undefined ? DEFAULT_TEXT_FIELDS.join(' / ') : [this.options.textField].flat().join(' + ');
  }
}

// --- Internal helpers ---

function readPath(record: object, path: string): unknown {
  if (path in record) return (record as Record<string, unknown>)[path];
  let value: unknown = record;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
