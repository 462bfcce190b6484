import { describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { IdTable } from '../../../stores/indexes/id-table.ts';
import { RowDocuments, type StoredRun } from '../../../stores/indexes/row-documents.ts';

const doc = (id: string): Document => ({ id, content: `text of ${id}`, sourceType: 't', sourceName: 's', score: 0, metadata: {} });

/** A run of these ids that counts the documents it makes. */
function run(ids: string[]): StoredRun & { made: string[] } {
  const made: string[] = [];
  const table = IdTable.fromStrings(ids);
  return {
    ids: table,
    made,
    document: (position) => {
      made.push(ids[position]);
      return doc(ids[position]);
    },
  };
}

describe('RowDocuments', () => {
  it('makes no document of a run until one is asked for, and keeps the one it made', () => {
    const rows = new RowDocuments();
    const first = run(['a', 'b', 'c']);
    expect(rows.appendRun(first)).toBe(0);
    expect(rows.size).toBe(3);
    expect([0, 1, 2].map((row) => rows.idAt(row))).toEqual(['a', 'b', 'c']);
    expect(rows.rowOf('c')).toBe(2);
    expect(first.made).toEqual([]);
    const b = rows.documentAt(1);
    expect(b.id).toBe('b');
    expect(rows.documentAt(1)).toBe(b);
    expect(first.made).toEqual(['b']);
  });

  it('keeps id → row right through removes, replaces and rows added one by one', () => {
    const rows = new RowDocuments();
    rows.append(doc('x'));
    rows.appendRun(run(['a', 'b', 'c', 'd']));
    rows.appendRun(run(['e', 'f']));
    // Removing a row moves the last one into it.
    expect(rows.removeRow(1)).toBe(6);
    expect(rows.rowOf('a')).toBeUndefined();
    expect(rows.rowOf('f')).toBe(1);
    expect(rows.removeRow(rows.size - 1)).toBe(-1);
    expect(rows.rowOf('e')).toBeUndefined();
    rows.replace(rows.rowOf('c')!, { ...doc('c'), content: 'newer' });
    expect(rows.documentAt(rows.rowOf('c')!).content).toBe('newer');
    // An id that left one run can come back in another.
    rows.appendRun(run(['a']));
    const expected = ['x', 'f', 'b', 'c', 'd', 'a'];
    expect(Array.from({ length: rows.size }, (_, row) => rows.idAt(row))).toEqual(expected);
    expected.forEach((id, row) => expect(rows.rowOf(id)).toBe(row));
    expect(rows.removeRow(0)).toBe(5);
    expect(rows.rowOf('x')).toBeUndefined();
    expect(rows.rowOf('a')).toBe(0);
  });

  it('lets a run go once every row left it: lookups and the shared-id check no longer read its ids', () => {
    const rows = new RowDocuments();
    const gone = run(['a', 'b']);
    rows.appendRun(gone);
    rows.appendRun(run(['c']));
    const find = vi.spyOn(gone.ids, 'find');
    const shared = vi.spyOn(gone.ids, 'forEachShared');
    rows.removeRow(rows.rowOf('a')!);
    expect(rows.rowOf('zz')).toBeUndefined();
    expect(find).toHaveBeenCalled();
    rows.replace(rows.rowOf('b')!, doc('b'));
    find.mockClear();
    expect(rows.rowOf('zz')).toBeUndefined();
    expect(rows.idAt(rows.rowOf('b')!)).toBe('b');
    expect(rows.firstShared(run(['b', 'q']), new Set())).toBe('b');
    expect(find).not.toHaveBeenCalled();
    expect(shared).not.toHaveBeenCalled();
    expect(Array.from({ length: rows.size }, (_, row) => rows.idAt(row)).sort()).toEqual(['b', 'c']);
  });

  it('names an id a new run shares with the rows held, leaving out the positions ignored', () => {
    const rows = new RowDocuments();
    rows.append(doc('x'));
    rows.appendRun(run(['a', 'b']));
    expect(rows.firstShared(run(['c', 'b']), new Set())).toBe('b');
    expect(rows.firstShared(run(['c', 'b']), new Set([1]))).toBeUndefined();
    expect(rows.firstShared(run(['x']), new Set())).toBe('x');
    rows.removeRow(rows.rowOf('b')!);
    expect(rows.firstShared(run(['c', 'b']), new Set())).toBeUndefined();
  });
});
