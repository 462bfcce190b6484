/**
 * The keyword (BM25) index of `FileStore` as a derived index: saved as `keyword-index-<generation>.bm25`
 * under `components.keyword` in the manifest, kept in step with writes and caught up on load (see
 * file-store-snapshot.ts for the protocol).
 */
import type { z } from 'zod';
import { Bm25Index } from '../indexes/bm25-index.ts';
import type { DerivedIndexKind } from './file-store-snapshot.ts';
import { createKeywordIndex, keywordInput, type keywordIndexOptionSchema } from '../indexes/keyword-index-support.ts';

/** The keyword index with the store's options (`keywordIndex` must not be `false`). */
export function keywordIndexKind(option: Exclude<z.output<typeof keywordIndexOptionSchema>, false>): DerivedIndexKind<Bm25Index> {
  const create = () => createKeywordIndex(option)!;
  const expected = analysisOf(create());
  return {
    key: 'keyword',
    label: 'keyword index',
    file: 'keyword-index.bm25',
    staleShare: 0.25,
    // Indexing text again costs far more than reading the snapshot (20,000 chunks: 4.5 s against 1.5 s
    // to decode 80,000, bench/cold-start.ts), and every later load would repeat it: save the catch-up.
    saveAfterCatchUp: true,
    create,
    // The bytes were read for this load alone: the index may keep them rather than copy them.
    deserialize: (bytes) => Bm25Index.deserialize(bytes, { adopt: true }),
    serialize: (index) => index.serialize(),
    // A load reads the vocabulary and tables alone; a term's postings and a hit's fields are read from the file
    // when a search first needs them (each checked by its own checksum), not the whole snapshot.
    readInParts: {
      headBytes: (serialized) => Bm25Index.snapshotHeadBytes(serialized),
      open: (head, reader) => Bm25Index.deserialize(head, { adopt: true, reader }),
    },
    matchesSettings: (index) => analysisOf(index) === expected,
    addRows: (index, vectors, rows) => index.add(rows.map((row) => keywordInput(vectors.storedDocumentAt(row)))),
    apply: (index, change) => {
      if (change.removed?.length) index.remove(change.removed);
      if (change.added) index.add(change.added.documents.map(keywordInput));
    },
    count: (index) => index.count(),
    ids: (index) => index.ids(),
    remove: (index, ids) => index.remove(ids),
  };
}

/** What decides the terms and scores of an index; a snapshot made with other settings is rebuilt. */
function analysisOf(index: Bm25Index): string {
  return JSON.stringify([index.k1, index.b, index.tokenizer.options]);
}
