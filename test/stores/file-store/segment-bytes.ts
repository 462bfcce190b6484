/**
 * Where each document's bytes lie in a version 2 or 3 segment file, for tests that damage one document on purpose:
 * its vector row, its id's characters in the id list, its fields and its content, and its entries in the tables.
 */
import { HEADER_BYTES_V2, readHeader, uint32Table } from '../../../stores/file-store/file-store-segment-layout.ts';

/** A byte range of the file, `[start, end)`. */
export type Range = readonly [start: number, end: number];

export interface DocumentBytes {
  id: string;
  row: number;
  vector: Range;
  /** The id's characters inside the id list's JSON (without its quotes). */
  idText: Range;
  fields: Range;
  content: Range;
  /** Its entries in the offset and checksum tables (each 4 bytes). */
  tableEntries: Range[];
}

export interface SegmentBytes {
  header: Range;
  /** The whole id list (its JSON and padding). */
  ids: Range;
  documents: DocumentBytes[];
}

export function segmentBytes(buffer: Buffer): SegmentBytes {
  const shape = readHeader(buffer.subarray(0, HEADER_BYTES_V2), { documents: buffer.readUInt32LE(8), bytes: buffer.length }, null, (problem) => {
    throw new Error(`not a segment: ${problem}`);
  });
  const { layout, count, dimensions } = shape;
  const ids = JSON.parse(buffer.toString('utf8', layout.ids, layout.ids + shape.idBytes)) as string[];
  const fieldOffsets = uint32Table(buffer, layout.fieldOffsets, count + 1);
  const contentOffsets = uint32Table(buffer, layout.contentOffsets, count + 1);
  let idAt = layout.ids + 1; // past `[`
  const documents = ids.map((id, row): DocumentBytes => {
    const text = Buffer.byteLength(JSON.stringify(id), 'utf8');
    const idText: Range = [idAt + 1, idAt + text - 1];
    idAt += text + 1; // the id's JSON, then `,`
    const entry = (table: number, index: number): Range => [table + index * 4, table + index * 4 + 4];
    const tableEntries = [
      entry(layout.fieldOffsets, row),
      entry(layout.fieldOffsets, row + 1),
      entry(layout.contentOffsets, row),
      entry(layout.contentOffsets, row + 1),
      entry(layout.fieldChecksums, row),
      entry(layout.contentChecksums, row),
      ...(shape.version === 3 ? [entry(layout.rowChecksums, row)] : []),
    ];
    return {
      id,
      row,
      vector: [HEADER_BYTES_V2 + row * dimensions * 4, HEADER_BYTES_V2 + (row + 1) * dimensions * 4],
      idText,
      fields: [layout.fields + fieldOffsets[row], layout.fields + fieldOffsets[row + 1]],
      content: [layout.contents + contentOffsets[row], layout.contents + contentOffsets[row + 1]],
      tableEntries,
    };
  });
  return { header: [0, HEADER_BYTES_V2], ids: [layout.ids, layout.fieldOffsets], documents };
}

/** Whether `position` lies in `range`. */
export function within(position: number, [start, end]: Range): boolean {
  return position >= start && position < end;
}

/** The documents whose own bytes (vector, id, fields, content, table entries) hold `position`. */
export function documentsAt(bytes: SegmentBytes, position: number): string[] {
  return bytes.documents
    .filter((document) =>
      [document.vector, document.idText, document.fields, document.content, ...document.tableEntries].some((range) => within(position, range)),
    )
    .map((document) => document.id);
}
