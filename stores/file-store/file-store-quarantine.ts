/**
 * Setting damaged documents aside. A segment's head (ids, vectors, tables) is checked when the store loads; each
 * document's fields and content only when first read, against their own checksum. A document that fails there is
 * taken out of the store as one process holds it (the vector index and the derived indexes), so searches (vector,
 * filtered, keyword, hybrid) skip it, with a warning naming it, instead of failing for every query that reaches
 * it. It stays live in the manifest: ingesting its source again replaces it (by id, or by source when its fields
 * could be read), `axon store repair` removes it and keeps the rest of its segment, and compaction leaves its
 * segment as it is rather than fail on it.
 */
import { damagedDocumentOf, StoredDocument } from './file-store-segment.ts';
import type { DamagedDocument } from './file-store-salvage.ts';
import type { DerivedIndexKind } from './file-store-snapshot.ts';
import type { LoadedState } from './file-store-state.ts';

/**
 * Set aside every damaged document of the segment the error names, if the error is a stored document's damage:
 * the documents of that segment are checked (each read once, nothing kept), and those that fail are removed from
 * `state`'s vector index and from the derived indexes it has loaded, and recorded in `state.damaged`. Returns the
 * documents newly set aside, or `undefined` when the error is not a damaged document of this state (nothing to
 * retry). A derived index that cannot drop them is dropped itself, to be rebuilt without them.
 */
export async function setAsideDamaged(state: LoadedState, error: unknown, kinds: readonly DerivedIndexKind<unknown>[]): Promise<DamagedDocument[] | undefined> {
  const named = damagedDocumentOf(error);
  if (named === undefined) return undefined;
  // Rows a load left in their files are checked first: a damaged table (not the document) is the segment's damage.
  state.index.makeResident();
  // Already set aside (by a call that ran meanwhile): the caller can try again.
  if (state.damaged.has(named.id) && !state.index.has(named.id)) return [];
  const segmentOfId = state.segmentOfId;
  const found: { document: object; damaged: DamagedDocument }[] = [];
  for (let row = 0; row < state.index.size; row++) {
    const document = state.index.storedDocumentAt(row);
    if (segmentOfId.get(document.id) !== named.file) continue;
    const problem = StoredDocument.damage(document);
    if (problem !== undefined) found.push({ document, damaged: { id: document.id, ...sourceOf(document), segment: named.file, problem, idIntact: true } });
  }
  if (found.length === 0) return undefined;
  const loaded = await Promise.all(kinds.map(async (kind) => ({ kind, loaded: await state.derived.get(kind.key)?.catch(() => undefined) })));
  // The same damaged documents still (a write may have replaced one while the derived indexes were awaited).
  const still = found.filter(({ document, damaged }) => {
    const row = state.index.rowOf(damaged.id);
    return row !== undefined && state.index.storedDocumentAt(row) === document;
  });
  const ids = still.map(({ damaged }) => damaged.id);
  // As a committed delete does: the derived indexes first, then the vectors (the graph reads them).
  for (const { kind, loaded: derived } of loaded) {
    if (derived === undefined) continue;
    try {
      kind.remove(derived.index, ids);
    } catch (cause) {
      state.derived.delete(kind.key);
      state.distrusted.set(kind.key, `it could not drop the damaged documents: ${(cause as Error).message}`);
    }
  }
  state.index.delete(ids);
  for (const { damaged } of still) state.damaged.set(damaged.id, damaged);
  state.version++;
  return still.map(({ damaged }) => damaged);
}

/** The warning for documents just set aside: each by id and source, and what to do. */
export function setAsideWarning(directory: string, documents: readonly DamagedDocument[]): string {
  const shown = documents.slice(0, 10).map(describeDamaged).join('; ');
  const more = documents.length > 10 ? `; and ${documents.length - 10} more` : '';
  const them = documents.length === 1 ? 'it' : 'them';
  return (
    `[axon] [file-store] ${documents.length === 1 ? 'A document' : `${documents.length} documents`} of ${directory}/${documents[0].segment} ` +
    `${documents.length === 1 ? 'is' : 'are'} damaged and set aside: searches skip ${them}. ${shown}${more}. ` +
    `Ingest ${documents.length === 1 ? 'its source' : 'their sources'} again to replace ${them}, or run \`axon store repair ${directory}\` ` +
    `to remove ${them} and keep every other document.`
  );
}

/** One damaged document in words: its id, its source (or why it is unknown), what is wrong. */
export function describeDamaged(document: DamagedDocument): string {
  const source = document.sourceType === undefined ? 'source unknown' : `${document.sourceType}:${document.sourceName}`;
  return `${JSON.stringify(document.id)} (${source}): ${document.problem}`;
}

/** The segments that hold documents set aside: compaction leaves them as they are (`axon store repair` rewrites them). */
export function segmentsWithDamage(state: LoadedState): Set<string> {
  return new Set([...state.damaged.values()].map((damaged) => damaged.segment));
}

/** The documents set aside whose source is known and is this one (a delete by source removes them too). */
export function damagedOfSource(state: LoadedState, sourceType: string, sourceName?: string): string[] {
  const ids: string[] = [];
  for (const damaged of state.damaged.values()) {
    if (damaged.sourceType === sourceType && (sourceName === undefined || damaged.sourceName === sourceName)) ids.push(damaged.id);
  }
  return ids;
}

// --- Internal helpers ---

/** A stored document's source, when its fields can be read. */
function sourceOf(document: { sourceType: string; sourceName: string }): { sourceType?: string; sourceName?: string } {
  try {
    return { sourceType: document.sourceType, sourceName: document.sourceName };
  } catch {
    return {};
  }
}
