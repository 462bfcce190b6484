import { contentHash, type Document } from '../document.ts';

export interface DeduplicationResult {
  documents: Document[];
  /** Each removed document with the id of the one kept in its place. */
  removed: { id: string; keptId: string; reason: 'duplicate-id' | 'duplicate-content' }[];
}

/**
 * Remove duplicates, first by id, then by normalised content hash, keeping the first occurrence in input
 * order but giving it the best score seen among its duplicates. Input order is otherwise preserved.
 */
export function deduplicate(documents: readonly Document[]): DeduplicationResult {
  const removed: DeduplicationResult['removed'] = [];
  const byId = new Map<string, Document>();
  for (const document of documents) {
    const kept = byId.get(document.id);
    if (kept === undefined) {
      byId.set(document.id, { ...document });
    } else {
      if (document.score > kept.score) kept.score = document.score;
      removed.push({ id: document.id, keptId: kept.id, reason: 'duplicate-id' });
    }
  }
  const byContent = new Map<string, Document>();
  const result: Document[] = [];
  for (const document of byId.values()) {
    const hash = contentHash(document.content);
    const kept = byContent.get(hash);
    if (kept === undefined) {
      byContent.set(hash, document);
      result.push(document);
    } else {
      if (document.score > kept.score) kept.score = document.score;
      removed.push({ id: document.id, keptId: kept.id, reason: 'duplicate-content' });
    }
  }
  return { documents: result, removed };
}

/**
 * How the trace records a removal: the reason in words and, for a copy of another document's content, that
 * document's id (printouts name it by source and chunk).
 */
export function describeRemoval(removed: DeduplicationResult['removed'][number]): { reason: string; keptId?: string } {
  return removed.reason === 'duplicate-id' ? { reason: 'repeated id' } : { reason: 'same content as another document', keptId: removed.keptId };
}
