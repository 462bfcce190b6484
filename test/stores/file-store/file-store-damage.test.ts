/**
 * Property: random damage (a few flipped bits) to a random file (a segment, the keyword snapshot, the manifest) of a
 * random store. `verify` reports it; no read of the damaged store ever returns a wrong document (it may refuse to
 * open, or leave documents out); and `recover` keeps every document whose own bytes the damage did not touch.
 * Damage to what a whole segment depends on (its header, its id list) may cost that segment, and is allowed to.
 */
import fc from 'fast-check';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { parseManifest, readManifest } from '../../../stores/file-store/file-store-format.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { propertyRuns } from '../../helpers/property.ts';
import { mulberry32 } from '../../helpers/random.ts';
import { temporaryDirectories } from '../support.ts';
import { documentsAt, segmentBytes, within } from './segment-bytes.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-damage-');

afterEach(() => {
  vi.restoreAllMocks();
});

const WORDS = ['apple', 'bread', 'cheese', 'dates', 'eggs', 'figs', 'grapes', 'honey'];

interface Plan {
  seed: number;
  batches: number[];
  dimensions: number;
  deleteSource: boolean;
  target: 'segment' | 'keyword' | 'manifest';
  segment: number;
  flips: { at: number; bit: number }[];
}

const plans = fc.record({
  seed: fc.nat(),
  batches: fc.array(fc.integer({ min: 3, max: 12 }), { minLength: 1, maxLength: 3 }),
  dimensions: fc.integer({ min: 3, max: 6 }),
  deleteSource: fc.boolean(),
  target: fc.constantFrom('segment', 'segment', 'segment', 'keyword', 'manifest'),
  segment: fc.nat(),
  flips: fc.array(fc.record({ at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), bit: fc.nat(7) }), { minLength: 1, maxLength: 3 }),
}) as fc.Arbitrary<Plan>;

/** Every version of every document written, by id (a lost manifest may bring back one deleted or replaced since), and the live ones. */
interface Written {
  versions: Map<string, Document[]>;
  live: Map<string, Document>;
}

async function buildStore(directory: string, plan: Plan): Promise<Written> {
  const next = mulberry32(plan.seed);
  const written: Written = { versions: new Map(), live: new Map() };
  const store = new FileStore({ directory, autoCompact: false });
  let serial = 0;
  for (const size of plan.batches) {
    const batch = Array.from({ length: size }, () => {
      // Some ids come again: a later batch replaces them.
      const id = `d${Math.floor(next() * 30)}-${serial++ % 3 === 0 ? 'x' : serial}`;
      return doc(
        id,
        Array.from({ length: plan.dimensions }, () => next() - 0.5),
        {
          content: Array.from({ length: 3 + Math.floor(next() * 5) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' '),
          sourceType: 'file',
          sourceName: `s${Math.floor(next() * 4)}.md`,
          metadata: { n: Math.floor(next() * 100), lang: next() < 0.5 ? 'en' : 'fr' },
        },
      );
    });
    const unique = [...new Map(batch.map((document) => [document.id, document])).values()];
    await store.add(unique);
    for (const document of unique) {
      written.versions.set(document.id, [...(written.versions.get(document.id) ?? []), document]);
      written.live.set(document.id, document);
    }
  }
  if (plan.deleteSource) {
    await store.deleteBySource('file', 's1.md');
    for (const [id, document] of written.live) if (document.sourceName === 's1.md') written.live.delete(id);
  }
  await store.close();
  return written;
}

/** The stored form of a written document, for comparison with what a read returns. */
function same(found: Document, written: Document): boolean {
  const vector = written.embedding as number[];
  const norm = Math.hypot(...vector);
  return (
    found.id === written.id &&
    found.content === written.content &&
    found.sourceType === written.sourceType &&
    found.sourceName === written.sourceName &&
    JSON.stringify(found.metadata) === JSON.stringify(written.metadata) &&
    Array.from(found.embedding ?? []).every((value, index) => Math.abs(value - vector[index] / norm) < 1e-6)
  );
}

/** Every read there is, on a store that opens: each document returned must be one that was written, as written. */
async function expectNoWrongDocument(directory: string, written: Written): Promise<Document[] | undefined> {
  let store: FileStore;
  try {
    store = await FileStore.open({ directory });
  } catch (error) {
    expect((error as { code?: string }).code).toBe('STORE_CORRUPT');
    return undefined;
  }
  const ids = [...written.versions.keys()];
  const reads = [
    await store.getByIds(ids),
    await store.search([1, 0.5, -0.5, 0.25, 0, 0].slice(0, (written.versions.values().next().value as Document[])[0].embedding!.length), { topK: 100 }),
    await store.search([0.5, -1, 0.5, 0, 0.25, 0.1].slice(0, (written.versions.values().next().value as Document[])[0].embedding!.length), {
      topK: 100,
      filter: { lang: 'en' },
    }),
    await store.keywordSearch('apple cheese honey', { topK: 100 }),
    await store.getBySource('file'),
  ];
  for (const found of reads.flat()) {
    const versions = written.versions.get(found.id) ?? [];
    expect({ id: found.id, written: versions.some((version) => same(found, version)) }).toEqual({ id: found.id, written: true });
  }
  const held = reads[0];
  await store.close();
  return held;
}

describe('FileStore under random damage, property', () => {
  it('property: verify reports the damage, no read returns a wrong document, and recover keeps every document the damage did not touch', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    await fc.assert(
      fc.asyncProperty(plans, async (plan) => {
        const directory = await temporaryDirectory();
        try {
          await checkDamage(directory, plan);
        } finally {
          await rm(directory, { recursive: true, force: true });
        }
      }),
      propertyRuns(25),
    );
  });
});

async function checkDamage(directory: string, plan: Plan): Promise<void> {
  const written = await buildStore(directory, plan);
  const manifest = (await readManifest(directory, 'test'))!;
  const keyword = (manifest.components.keyword as { file: string } | undefined)?.file;
  const target = plan.target === 'keyword' && keyword !== undefined ? keyword : plan.target === 'manifest' ? 'manifest.json' : undefined;
  const segment = manifest.segments[plan.segment % manifest.segments.length];
  const file = target ?? segment.file;
  const original = await readFile(join(directory, file));
  const bytes = Buffer.from(original);
  const flips = plan.target === 'manifest' ? plan.flips.slice(0, 1) : plan.flips;
  for (const flip of flips) bytes[Math.floor(flip.at * bytes.length)] ^= 1 << flip.bit;
  // Two flips of the same bit cancel out: the damage is where the bytes differ.
  const positions = [...new Set(flips.map((flip) => Math.floor(flip.at * bytes.length)))].filter((position) => bytes[position] !== original[position]);
  if (positions.length === 0) return;
  await writeFile(join(directory, file), bytes);

  // The documents the damage touched: in a segment, those whose own bytes hold a flipped bit; all of the
  // segment's when a flip hit what every document depends on (its header, its id list).
  const touched = new Set<string>();
  if (file === segment.file) {
    const layout = segmentBytes(original);
    const shared = positions.some((position) => within(position, layout.header) || within(position, layout.ids));
    for (const document of layout.documents) if (shared) touched.add(document.id);
    for (const position of positions) for (const id of documentsAt(layout, position)) touched.add(id);
  }

  // verify reports it (a manifest flip may leave the same manifest: then there is nothing to report).
  const unchanged = file === 'manifest.json' && sameManifest(original, bytes, directory);
  try {
    const report = await FileStore.verify({ directory });
    if (!unchanged) expect(report.files.find((checked) => checked.file === file)?.problem).toBeDefined();
    expect(report.ok).toBe(unchanged);
  } catch (error) {
    expect({ file, code: (error as { code?: string }).code }).toEqual({ file: 'manifest.json', code: 'STORE_CORRUPT' });
  }

  await expectNoWrongDocument(directory, written);

  const report = await FileStore.recover({ directory });
  const held = (await expectNoWrongDocument(directory, written)) ?? [];
  const heldIds = new Set(held.map((document) => document.id));
  const kept = [...written.live.keys()].filter((id) => !touched.has(id));
  expect({ file, positions, missing: kept.filter((id) => !heldIds.has(id)) }).toEqual({ file, positions, missing: [] });
  // With the manifest intact, what it deleted stays deleted and every live document is either kept or reported.
  if (file !== 'manifest.json') {
    for (const id of heldIds) expect(written.live.has(id)).toBe(true);
    const reported = new Set(report.damaged.map((damaged) => damaged.id));
    const unaccounted = [...written.live.keys()].filter((id) => !heldIds.has(id) && !reported.has(id));
    expect(report.lost).toBeGreaterThanOrEqual(unaccounted.length > 0 ? 1 : 0);
  }
}

/** Whether the damaged manifest text still reads as the original manifest (a flip in its trailing newline, say). */
function sameManifest(original: Buffer, damaged: Buffer, directory: string): boolean {
  try {
    return (
      JSON.stringify(parseManifest(damaged.toString('utf8'), directory, 'test')) === JSON.stringify(parseManifest(original.toString('utf8'), directory, 'test'))
    );
  } catch {
    return false;
  }
}
