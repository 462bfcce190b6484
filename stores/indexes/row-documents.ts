/**
 * The documents of `VectorIndex`'s rows and the map from id to row. Rows added one by one (`append`) hold their
 * document and are found through a `Map`; rows loaded from storage as a run (`appendRun`, a segment's rows) are
 * found through the run's `IdTable` and get their document object only when first asked for (`documentAt`), so a
 * load makes no string, map entry or object per row. Rows stay dense: `removeRow` moves the last row into the hole.
 */
import type { Document } from '../../src/document.ts';
import type { IdTable } from './id-table.ts';

/** Rows read from storage together: their ids, and how to make the document of one when it is first needed. */
export interface StoredRun {
  readonly ids: IdTable;
  /** The document at `position` of the run (its id is `ids.idAt(position)`). */
  document(position: number): Document;
}

interface HeldRun {
  readonly run: StoredRun;
  /** The row of each position of the run, or -1 once it left the run (deleted, replaced). */
  readonly rowOf: Int32Array;
  /** How many of its positions still hold a row: at 0 the run is let go (its ids, and the file its documents read). */
  live: number;
}

/** Row → document and id → row, for rows added one by one and for runs loaded from storage. */
export class RowDocuments {
  /** Each row's document; `undefined` for a row of a run whose document was not asked for yet. */
  private readonly documents: (Document | undefined)[] = [];
  /** The rows not reached through a run. */
  private readonly rowById = new Map<string, number>();
  /** The runs, by index (`runOf`); `undefined` once every row of a run left it. */
  private readonly runs: (HeldRun | undefined)[] = [];
  /** For each row, its run (an index into `runs`), or -1 for a row of `rowById`; and its position in that run. */
  private runOf = new Int32Array(0);
  private positionOf = new Int32Array(0);

  get size(): number {
    return this.documents.length;
  }

  rowOf(id: string): number | undefined {
    const row = this.rowById.get(id);
    if (row !== undefined || this.runs.length === 0) return row;
    for (const held of this.runs) {
      if (held === undefined) continue;
      const position = held.run.ids.find(id);
      if (position >= 0 && held.rowOf[position] >= 0) return held.rowOf[position];
    }
    return undefined;
  }

  /** The document at `row`, made now if it was not yet (and kept). */
  documentAt(row: number): Document {
    const held = this.documents[row];
    if (held !== undefined) return held;
    const made = this.runs[this.runOf[row]]!.run.document(this.positionOf[row]);
    this.documents[row] = made;
    return made;
  }

  /** The id at `row`, without making its document. */
  idAt(row: number): string {
    return this.documents[row]?.id ?? this.runs[this.runOf[row]]!.run.ids.idAt(this.positionOf[row]);
  }

  /** Add a row for `document` (its id must be new); returns the row. */
  append(document: Document): number {
    const row = this.documents.length;
    this.reserve(row + 1);
    this.documents.push(document);
    this.runOf[row] = -1;
    this.rowById.set(document.id, row);
    return row;
  }

  /** Put `document` (of the same id) at `row`, in place of what was there. */
  replace(row: number, document: Document): void {
    this.detach(row);
    this.documents[row] = document;
    this.runOf[row] = -1;
    this.rowById.set(document.id, row);
  }

  /** Add the rows of `run`, in its order; returns the first. Its ids must be new (see `firstShared`). */
  appendRun(run: StoredRun): number {
    const first = this.documents.length;
    const count = run.ids.count;
    this.reserve(first + count);
    const index = this.runs.length;
    const rowOf = new Int32Array(count);
    placeRun(this.documents, this.runOf, this.positionOf, rowOf, first, index);
    this.runs.push({ run, rowOf, live: count });
    return first;
  }

  /** An id that `run` holds and that a row here holds too (leaving out the run's positions `ignored`), or `undefined`. */
  firstShared(run: StoredRun, ignored: ReadonlySet<number>): string | undefined {
    for (const id of this.rowById.keys()) {
      const position = run.ids.find(id);
      if (position >= 0 && !ignored.has(position)) return id;
    }
    let shared: string | undefined;
    for (const held of this.runs) {
      if (held === undefined) continue;
      held.run.ids.forEachShared(run.ids, (here, there) => {
        if (shared === undefined && held.rowOf[here] >= 0 && !ignored.has(there)) shared = run.ids.idAt(there);
      });
      if (shared !== undefined) return shared;
    }
    return undefined;
  }

  /** Remove `row`: the last row moves into it (unless it is the last). Returns the row that moved, or -1. */
  removeRow(row: number): number {
    this.detach(row);
    const last = this.documents.length - 1;
    if (row !== last) {
      this.documents[row] = this.documents[last];
      const run = this.runOf[last];
      this.runOf[row] = run;
      this.positionOf[row] = this.positionOf[last];
      if (run >= 0) this.runs[run]!.rowOf[this.positionOf[last]] = row;
      else this.rowById.set(this.documents[row]!.id, row);
    }
    this.documents.pop();
    return row === last ? -1 : last;
  }

  // --- Internal helpers ---

  /** Forget how `row` is found (its run position, or its map entry). */
  private detach(row: number): void {
    const run = this.runOf[row];
    if (run >= 0) {
      const held = this.runs[run]!;
      held.rowOf[this.positionOf[row]] = -1;
      if (--held.live === 0) this.runs[run] = undefined;
    } else this.rowById.delete(this.documents[row]!.id);
  }

  private reserve(rows: number): void {
    if (rows <= this.runOf.length) return;
    const capacity = Math.max(rows, this.runOf.length * 2, 64);
    const runOf = new Int32Array(capacity);
    runOf.set(this.runOf);
    this.runOf = runOf;
    const positionOf = new Int32Array(capacity);
    positionOf.set(this.positionOf);
    this.positionOf = positionOf;
  }
}

/**
 * Rows `first` on hold the positions of run `index` in order (`rowOf.length` of them), their documents not made
 * yet. A small function: V8 optimises its loop soon, in the fresh process a load runs in.
 */
function placeRun(documents: (Document | undefined)[], runOf: Int32Array, positionOf: Int32Array, rowOf: Int32Array, first: number, index: number): void {
  runOf.fill(index, first, first + rowOf.length);
  for (let position = 0; position < rowOf.length; position++) {
    documents.push(undefined);
    positionOf[first + position] = position;
    rowOf[position] = first + position;
  }
}
