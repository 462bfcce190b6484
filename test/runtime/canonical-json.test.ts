import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/runtime/canonical-json.ts';

// One sorted-key JSON for the embedding cache's identity key, the trace store's configuration hash and the pgvector
// table's stored options. The expected texts below are what each of the three wrote before they shared this helper:
// a changed text would change every cache key and stored hash.

const inputs = {
  nested: { b: { z: 1, a: [3, { y: true, x: null }] }, a: 'first' },
  arrays: [[2, 1], [], [{}], { list: [{ b: 1, a: 2 }] }],
  unicode: { é: 1, e: 2, Z: 3, '😀': 4, '\uffff': 5, ä: 6, '"quoted"\n': 7, '': 8 },
  numbers: { big: 1e21, negativeZero: -0, nan: Number.NaN, infinite: Number.POSITIVE_INFINITY, small: 1.5e-7 },
  strings: 'line\nbreak "quote" \u2028 \u0007',
  date: { when: new Date(0) },
  undefinedField: { a: undefined, b: 1, c: { d: undefined } },
  undefinedInArray: [1, undefined, 3],
  topUndefined: undefined,
  functionValue: { f: () => 1, g: 1 },
};

/** Texts all three wrote alike. */
const shared: Record<string, string> = {
  nested: '{"a":"first","b":{"a":[3,{"x":null,"y":true}],"z":1}}',
  arrays: '[[2,1],[],[{}],{"list":[{"a":2,"b":1}]}]',
  unicode: '{"":8,"\\"quoted\\"\\n":7,"Z":3,"e":2,"ä":6,"é":1,"😀":4,"\uffff":5}',
  numbers: '{"big":1e+21,"infinite":null,"nan":null,"negativeZero":0,"small":1.5e-7}',
  strings: '"line\\nbreak \\"quote\\" \u2028 \\u0007"',
  date: '{"when":{}}',
};

describe('canonicalJson', () => {
  it('writes nested objects, arrays, unicode keys, numbers and strings as every earlier copy did', () => {
    for (const [name, text] of Object.entries(shared)) {
      expect(canonicalJson(inputs[name as keyof typeof inputs]), name).toBe(text);
      expect(canonicalJson(inputs[name as keyof typeof inputs], { absent: 'undefined' }), name).toBe(text);
    }
  });

  it('writes what JSON has no text for as the embedding cache did (null) and as the trace store did (undefined)', () => {
    expect(canonicalJson(inputs.undefinedField)).toBe('{"b":1,"c":{}}');
    expect(canonicalJson(inputs.undefinedInArray)).toBe('[1,null,3]');
    expect(canonicalJson(inputs.topUndefined)).toBe('null');
    expect(canonicalJson(inputs.functionValue)).toBe('{"f":null,"g":1}');

    expect(canonicalJson(inputs.undefinedField, { absent: 'undefined' })).toBe('{"b":1,"c":{}}');
    expect(canonicalJson(inputs.undefinedInArray, { absent: 'undefined' })).toBe('[1,undefined,3]');
    expect(canonicalJson(inputs.topUndefined, { absent: 'undefined' })).toBe('undefined');
    expect(canonicalJson(inputs.functionValue, { absent: 'undefined' })).toBe('{"f":undefined,"g":1}');
  });

  it('gives equal text for equal data whatever the key order', () => {
    expect(canonicalJson({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(canonicalJson({ b: { d: 'x', c: [1, 2] }, a: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });
});
