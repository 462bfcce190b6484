import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleKernel, LOAD_KERNEL_BINARY, LOAD_KERNEL_SOURCE, loadKernelModuleSource } from '../../../scripts/build-wasm.ts';
import { LOAD_KERNEL_BASE64 } from '../../../stores/indexes/load-kernel-binary.ts';
import { IdTable, IdTableError } from '../../../stores/indexes/id-table.ts';

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('the committed load kernel', () => {
  it('is what scripts/build-wasm.ts assembles from load-kernel.wat', async () => {
    const assembled = await assembleKernel(readFileSync(LOAD_KERNEL_SOURCE, 'utf8'), 'load-kernel.wat');
    expect(Buffer.from(LOAD_KERNEL_BASE64, 'base64').equals(Buffer.from(assembled))).toBe(true);
    expect(readFileSync(LOAD_KERNEL_BINARY, 'utf8')).toBe(loadKernelModuleSource(assembled));
  });
});

describe('IdTable', () => {
  it('reads a JSON array of ids in place and finds each id at its position', () => {
    const ids = ['doc-0', 'doc-1', 'näive', '文書', 'emoji-😀', 'a'];
    for (const table of [IdTable.fromJsonArray(json(ids), ids.length), IdTable.fromStrings(ids)]) {
      expect(table.count).toBe(ids.length);
      ids.forEach((id, position) => {
        expect(table.idAt(position)).toBe(id);
        expect(table.find(id)).toBe(position);
      });
      expect(table.find('doc-2')).toBe(-1);
      expect(table.find('doc')).toBe(-1);
    }
  });

  it('takes spaces between the items and reads escaped ids through JSON.parse', () => {
    const spaced = new TextEncoder().encode(' [ "x" ,\n"y" ] ');
    expect([0, 1].map((position) => IdTable.fromJsonArray(spaced, 2).idAt(position))).toEqual(['x', 'y']);
    const escaped = ['quote"d', 'back\\slash', 'tab\there', 'lone \ud800 surrogate', 'plain'];
    const table = IdTable.fromJsonArray(json(escaped), escaped.length);
    escaped.forEach((id, position) => expect(table.find(id)).toBe(position));
    // Two ids that differ only by a lone surrogate are two ids.
    const surrogates = IdTable.fromStrings(['a\ud800', 'a\udc00', 'a\ufffd']);
    expect(['a\ud800', 'a\udc00', 'a\ufffd'].map((id) => surrogates.find(id))).toEqual([0, 1, 2]);
  });

  it('refuses what is not a list of that many non-empty string ids, and an id there twice', () => {
    const bad: Array<[string, number, RegExp]> = [
      ['["a","b"]', 3, /not a list of 3/],
      ['["a","b","c"]', 2, /not a list of 2/],
      ['{"a":1}', 1, /not a list/],
      ['["a",""]', 2, /non-empty string/],
      ['["a",1]', 2, /non-empty string/],
      ['["a","b', 2, /not valid JSON/],
      ['["a","b"] x', 2, /not valid JSON/],
      ['["a","\\u0062",1]', 3, /non-empty string/],
      ['["a","b","a"]', 3, /the id "a" twice/],
    ];
    for (const [text, count, message] of bad) {
      expect(() => IdTable.fromJsonArray(new TextEncoder().encode(text), count), text).toThrow(message);
      expect(() => IdTable.fromJsonArray(new TextEncoder().encode(text), count), text).toThrow(IdTableError);
    }
    expect(() => IdTable.fromStrings(['x', 'y', 'x'])).toThrow(/the id "x" twice/);
  });

  it('lists the ids two tables share, by position in each', () => {
    const here = IdTable.fromJsonArray(json(['a', 'b', 'c', 'd']), 4);
    const there = IdTable.fromStrings(['d', 'e', 'b']);
    const shared: Array<[number, number]> = [];
    here.forEachShared(there, (position, other) => shared.push([position, other]));
    expect(shared).toEqual([
      [3, 0],
      [1, 2],
    ]);
  });

  it('reads one table after a larger one (the reading memory is reused) and names a duplicate far into the array', () => {
    const large = Array.from({ length: 5_000 }, (_, index) => `large-${index}`);
    expect(IdTable.fromJsonArray(json(large), large.length).find('large-4999')).toBe(4999);
    const small = IdTable.fromJsonArray(json(['x', 'y']), 2);
    expect([small.find('x'), small.find('y'), small.find('large-1')]).toEqual([0, 1, -1]);
    const twice = [...large, 'née', 'large-17'];
    expect(() => IdTable.fromJsonArray(json(twice), twice.length)).toThrow(/the id "large-17" twice/);
    expect(() => IdTable.fromJsonArray(json(['née', 'b', 'née']), 3)).toThrow(/the id "née" twice/);
  });

  it("lists every shared id of two large tables, in the other table's order, whichever way they were made", () => {
    const here = Array.from({ length: 3000 }, (_, index) => (index % 7 === 0 ? `dók-${index}` : `doc-${index}`));
    const there = Array.from({ length: 1200 }, (_, index) => (index % 3 === 0 ? here[(index * 11) % here.length] : `other-${index}`));
    const expected = there.flatMap((id, position) => (here.includes(id) ? [[here.indexOf(id), position]] : []));
    expect(expected.length).toBe(400);
    for (const [left, right] of [
      [IdTable.fromJsonArray(json(here), here.length), IdTable.fromStrings(there)],
      [IdTable.fromStrings(here), IdTable.fromJsonArray(json(there), there.length)],
    ]) {
      const shared: number[][] = [];
      left.forEachShared(right, (position, other) => shared.push([position, other]));
      expect(shared).toEqual(expected);
    }
    const none: number[][] = [];
    IdTable.fromStrings(['a']).forEachShared(IdTable.fromStrings(['b', 'ab', 'a ']), (position, other) => none.push([position, other]));
    expect(none).toEqual([]);
  });

  it('finds every id of a large table (hash collisions resolved by the bytes)', () => {
    const ids = Array.from({ length: 20_000 }, (_, index) => `doc-${index}`);
    const table = IdTable.fromJsonArray(json(ids), ids.length);
    for (let position = 0; position < ids.length; position += 97) expect(table.find(ids[position])).toBe(position);
    expect(table.find('doc-20000')).toBe(-1);
  });
});
