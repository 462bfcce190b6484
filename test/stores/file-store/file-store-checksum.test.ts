import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AxonError } from '../../../src/errors.ts';
import { assembleKernel, CHECKSUM_BINARY, CHECKSUM_SOURCE, checksumModuleSource } from '../../../scripts/build-wasm.ts';
import { CHECKSUM_MODULE_BASE64 } from '../../../stores/file-store/checksum-binary.ts';
import { createMemory } from '../../../stores/indexes/simd/wasm-runtime.ts';
import { CHECKSUM_PATTERN, checksumOf, contentChecksum } from '../../../stores/file-store/file-store-checksum.ts';
import { mulberry32 as random } from '../../helpers/random.ts';
import { propertyRuns } from '../../helpers/property.ts';

function bytesOf(length: number, seed: number): Uint8Array {
  const next = random(seed);
  return Uint8Array.from({ length }, () => Math.floor(next() * 256));
}

describe('the committed checksum module', () => {
  it('is what scripts/build-wasm.ts assembles from checksum.wat', async () => {
    const assembled = await assembleKernel(readFileSync(CHECKSUM_SOURCE, 'utf8'), 'checksum.wat');
    expect(Buffer.from(CHECKSUM_MODULE_BASE64, 'base64').equals(Buffer.from(assembled))).toBe(true);
    expect(readFileSync(CHECKSUM_BINARY, 'utf8')).toBe(checksumModuleSource(assembled));
  });
});

describe('file checksums (lanes64)', () => {
  it('is stable: the format is pinned by known values', () => {
    // These values are what stores on disk record; a change here makes every stored file fail its check.
    expect(checksumOf([]).checksum).toMatch(CHECKSUM_PATTERN);
    expect([checksumOf([]).checksum, checksumOf([bytesOf(1000, 7)]).checksum]).toEqual(['lanes64:c37564a6e5ff4d43', 'lanes64:04799d3409a849ad']);
  });

  it('does not depend on how the bytes are split into parts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 700 }), fc.array(fc.nat(700), { maxLength: 6 }), (length, cuts) => {
        const bytes = bytesOf(length, length + 1);
        const points = [0, ...cuts.map((cut) => cut % (length + 1)).sort((left, right) => left - right), length];
        const parts = points.slice(1).map((end, index) => bytes.subarray(points[index], end));
        expect(checksumOf(parts).checksum).toBe(checksumOf([bytes]).checksum);
      }),
      propertyRuns(200),
    );
  });

  it('changes with every single flipped bit, every truncation and every appended zero', () => {
    // Exhaustive over a buffer longer than two chunks of the module's scratch memory, at positions near the seams.
    const length = 2 * 131_072 + 300;
    const bytes = bytesOf(length, 3);
    const original = checksumOf([bytes]).checksum;
    const positions = [
      ...Array.from({ length: 300 }, (_, index) => index),
      ...Array.from({ length: 200 }, (_, index) => 131_072 - 100 + index),
      ...Array.from({ length: 300 }, (_, index) => length - 300 + index),
    ];
    for (const position of positions) {
      for (let bit = 0; bit < 8; bit++) {
        bytes[position] ^= 1 << bit;
        expect(checksumOf([bytes]).checksum).not.toBe(original);
        bytes[position] ^= 1 << bit;
      }
    }
    for (let cut = 1; cut <= 130; cut++) expect(checksumOf([bytes.subarray(0, length - cut)]).checksum).not.toBe(original);
    for (let zeros = 1; zeros <= 70; zeros++) expect(checksumOf([bytes, new Uint8Array(zeros)]).checksum).not.toBe(original);
  });

  it('gives the same value for bytes in a WebAssembly memory (hashed where they lie) as for a copy', () => {
    const memory = createMemory(4);
    const inMemory = new Uint8Array(memory.buffer);
    inMemory.set(bytesOf(inMemory.length, 13));
    for (const [start, end] of [
      [0, inMemory.length],
      [3, 200_001],
      [64, 64 * 1000],
      [100, 101],
    ]) {
      const view = inMemory.subarray(start, end);
      expect(checksumOf([view]).checksum).toBe(checksumOf([view.slice()]).checksum);
      expect(checksumOf([inMemory.subarray(0, start), view]).checksum).toBe(checksumOf([inMemory.slice(0, end)]).checksum);
    }
  });

  it('tells apart words swapped within a lane and across lanes', () => {
    const bytes = bytesOf(512, 11);
    const original = checksumOf([bytes]).checksum;
    // Words 0 and 16 feed the same lane; words 0 and 1 feed neighbouring lanes.
    for (const [left, right] of [
      [0, 64],
      [0, 4],
      [8, 200],
    ]) {
      const swapped = bytes.slice();
      swapped.set(bytes.subarray(right, right + 4), left);
      swapped.set(bytes.subarray(left, left + 4), right);
      expect(checksumOf([swapped]).checksum).not.toBe(original);
    }
  });

  it('verifies against what an entry records: lanes64 when present, else SHA-256', () => {
    const bytes = bytesOf(100, 5);
    const corrupt = (problem: string) => new AxonError('STORE_CORRUPT', problem, { component: 'test' });
    const check = (entry: { checksum?: string; sha256?: string }, data: Uint8Array) => {
      const checksum = contentChecksum(entry, corrupt);
      checksum.update(data.subarray(0, 30));
      checksum.update(data.subarray(30));
      checksum.verify('mismatch');
    };
    expect(() => check(checksumOf([bytes]), bytes)).not.toThrow();
    expect(() => check({ sha256: '0'.repeat(64) }, bytes)).toThrow('mismatch');
    const real = { sha256: createHash('sha256').update(bytes).digest('hex') };
    expect(() => check(real, bytes)).not.toThrow();
    const flipped = bytes.slice();
    flipped[99] ^= 0x80;
    expect(() => check(checksumOf([bytes]), flipped)).toThrow('mismatch');
    expect(() => check(real, flipped)).toThrow('mismatch');
  });
});
