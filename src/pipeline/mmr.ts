import type { Document, Vector } from '../document.ts';
import { AxonError } from '../errors.ts';
import { assertVector } from '../runtime/embed.ts';

export interface MarginalRelevanceOptions {
  /** How many documents to select (fewer when fewer are given). A positive integer. */
  k: number;
  /**
   * The trade-off, in [0, 1]: 1 ranks by relevance alone, 0 by novelty alone (after the first pick, which is
   * always the most relevant document when every score ties at 0).
   */
  lambda: number;
  /**
   * When given, relevance is the cosine between this vector and each document's embedding; otherwise it is
   * the document's current `score`. @default undefined (use `score`)
   */
  queryEmbedding?: Vector;
  /** Named in errors. @default 'mmr' */
  component?: string;
}

/** A document MMR picked, with the figures that picked it. */
export interface SelectedDocument {
  document: Document;
  /** `lambda × relevance − (1 − lambda) × redundancy` when it was picked. Non-increasing in selection order. */
  score: number;
  relevance: number;
  /** Its redundancy when it was picked (0 for the first pick). */
  redundancy: number;
}

/** A document MMR left out, with what kept it out. */
export interface UnselectedDocument {
  document: Document;
  /** Its MMR score against the final selection. */
  score: number;
  relevance: number;
  /** `max(0, similarity)`: the redundancy that cost it its place. */
  redundancy: number;
  /** The selected document it is most similar to (undefined only when nothing was selected). */
  mostSimilarId: string | undefined;
  /** Cosine similarity to `mostSimilarId`. */
  similarity: number;
}

/**
 * How the trace records a document MMR left out: the reason in words (the figures that kept it out) and the
 * selected document it was most similar to, by id, for printouts to name by source and chunk.
 */
export function describeUnselected(item: UnselectedDocument, options: { k: number; lambda?: number }): { reason: string; keptId?: string } {
  const figures = [
    `relevance ${item.relevance.toFixed(4)}`,
    `MMR ${item.score.toFixed(4)}`,
    `cosine ${item.similarity.toFixed(4)} to the selected document most like it`,
  ];
  const lambda = options.lambda === undefined ? '' : ` (lambda ${options.lambda})`;
  const reason = `not among the ${options.k} selected by MMR${lambda}: ${figures.join(', ')}`;
  return item.mostSimilarId === undefined ? { reason } : { reason, keptId: item.mostSimilarId };
}

export interface MarginalRelevanceResult {
  /** In selection order, which is also best-first by MMR score. */
  selected: SelectedDocument[];
  /** In input order. */
  unselected: UnselectedDocument[];
}

/**
 * Maximal marginal relevance: greedily pick the document with the highest
 * `lambda × relevance − (1 − lambda) × redundancy`, where redundancy is the largest cosine similarity between
 * its embedding and those of the documents already picked, until `k` are picked.
 *
 * Relevance is the incoming `score` unless `queryEmbedding` is given, so MMR works after any stage that sets
 * a score on a similarity-like scale (vector search, a reranker) without needing the query vector. The
 * trade-off is only meaningful when relevance and cosine share a scale; see docs/post-processors.md.
 *
 * Embeddings are normalised here (they need not be unit length). Negative similarity counts as no
 * redundancy: a document pointing away from the picks is no more novel than an orthogonal one, and rewarding
 * it would lift barely relevant documents above relevant ones. Ties go to the more relevant document, then to
 * the earlier one in the input, so the result is deterministic.
 *
 * @throws AxonError `INVALID_OPTION` (k, lambda), `INVALID_INPUT` (a non-finite score), `MISSING_EMBEDDINGS`, `INVALID_VECTOR`,
 *   `DIMENSION_MISMATCH`
 */
export function maximalMarginalRelevance(documents: readonly Document[], options: MarginalRelevanceOptions): MarginalRelevanceResult {
  const component = options.component ?? 'mmr';
  const { k, lambda } = options;
  if (typeof k !== 'number' || !Number.isInteger(k) || k <= 0) {
    throw new AxonError('INVALID_OPTION', `k must be a positive integer, got ${String(k)}.`, {
      component,
      fix: 'Pass how many documents to select, e.g. 5.',
      details: { option: 'k' },
    });
  }
  if (typeof lambda !== 'number' || !(lambda >= 0 && lambda <= 1)) {
    throw new AxonError('INVALID_OPTION', `lambda must be a number in [0, 1], got ${String(lambda)}.`, {
      component,
      fix: 'Use 1 for relevance only, 0 for diversity only, 0.5 (the default) for a balance.',
      details: { option: 'lambda' },
    });
  }
  if (documents.length === 0) return { selected: [], unselected: [] };

  const units = documents.map((document, position) => unitEmbedding(document, position, component));
  const dimensions = units[0].length;
  units.forEach((unit, position) => {
    if (unit.length !== dimensions) {
      throw new AxonError(
        'DIMENSION_MISMATCH',
        `The embedding of "${documents[position].id}" has ${unit.length} dimensions; the first document's has ${dimensions}.`,
        {
          component,
          fix: 'Every document must come from the same embeddings model.',
          details: { expected: dimensions, actual: unit.length },
        },
      );
    }
  });
  let relevance: number[];
  if (options.queryEmbedding !== undefined) {
    assertVector(options.queryEmbedding, dimensions, component, 'queryEmbedding');
    const query = normalize(options.queryEmbedding);
    relevance = units.map((unit) => dot(query, unit));
  } else {
    relevance = documents.map((document, position) => {
      if (typeof document.score !== 'number' || !Number.isFinite(document.score)) {
        throw new AxonError('INVALID_INPUT', `The score of "${document.id}" is ${String(document.score)}; MMR needs finite relevance scores.`, {
          component,
          fix: 'Give every document a finite score before MMR (a stage before it set this one), or pass queryEmbedding.',
          details: { argument: 'documents', position },
        });
      }
      return document.score;
    });
  }

  // The largest similarity of each document to the selection so far, and to which pick; updated per pick so
  // the whole selection costs k × n dot products.
  const similarity = new Array<number>(documents.length).fill(Number.NEGATIVE_INFINITY);
  const mostSimilar = new Array<number>(documents.length).fill(-1);
  const chosen = new Array<boolean>(documents.length).fill(false);
  const score = (index: number) => withoutNegativeZero(lambda * relevance[index] - (1 - lambda) * redundancyOf(similarity[index]));
  const selected: SelectedDocument[] = [];

  while (selected.length < Math.min(k, documents.length)) {
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let index = 0; index < documents.length; index++) {
      if (chosen[index]) continue;
      const candidate = score(index);
      // A margin keeps rounding noise from deciding ties that are exact on paper.
      if (best === -1 || candidate > bestScore + TIE_MARGIN || (candidate >= bestScore - TIE_MARGIN && relevance[index] > relevance[best] + TIE_MARGIN)) {
        best = index;
        bestScore = candidate;
      }
    }
    chosen[best] = true;
    selected.push({ document: documents[best], score: bestScore, relevance: relevance[best], redundancy: redundancyOf(similarity[best]) });
    for (let index = 0; index < documents.length; index++) {
      if (chosen[index]) continue;
      const cosine = dot(units[index], units[best]);
      if (cosine > similarity[index]) {
        similarity[index] = cosine;
        mostSimilar[index] = best;
      }
    }
  }

  const unselected: UnselectedDocument[] = [];
  documents.forEach((document, index) => {
    if (chosen[index]) return;
    unselected.push({
      document,
      score: score(index),
      relevance: relevance[index],
      redundancy: redundancyOf(similarity[index]),
      mostSimilarId: documents[mostSimilar[index]]?.id,
      similarity: similarity[index],
    });
  });
  return { selected, unselected };
}

/**
 * Cosine similarity of two vectors of the same length; 0 when either is the zero vector.
 * @throws AxonError `DIMENSION_MISMATCH` when the lengths differ
 */
export function cosineSimilarity(left: Vector, right: Vector, component = 'mmr'): number {
  if (left.length !== right.length) {
    throw new AxonError('DIMENSION_MISMATCH', `Cannot compare vectors of ${left.length} and ${right.length} dimensions.`, {
      component,
      fix: 'Embed queries and documents with the same embeddings model.',
      details: { expected: left.length, actual: right.length },
    });
  }
  return dot(normalize(left), normalize(right));
}

// --- Internal helpers ---

const TIE_MARGIN = 1e-12;

function redundancyOf(similarity: number): number {
  return Math.max(0, similarity);
}

function withoutNegativeZero(value: number): number {
  return value === 0 ? 0 : value;
}

function unitEmbedding(document: Document, position: number, component: string): Float64Array {
  if (document.embedding === undefined || document.embedding === null) {
    throw new AxonError(
      'MISSING_EMBEDDINGS',
      `Document "${document.id}" (position ${position}) has no embedding; MMR compares documents by their embeddings.`,
      {
        component,
        fix: 'Vector stores return the embedding with every search result; a post-processor that builds new documents must keep `embedding`.',
        details: { id: document.id, position },
      },
    );
  }
  assertVector(document.embedding, undefined, component, `the embedding of "${document.id}"`);
  return normalize(document.embedding);
}

/** A unit-length copy; a zero vector stays zero, so its similarity to anything is 0. */
function normalize(vector: Vector): Float64Array {
  let norm = 0;
  for (let index = 0; index < vector.length; index++) norm += vector[index] * vector[index];
  norm = Math.sqrt(norm);
  const unit = new Float64Array(vector.length);
  if (norm === 0) return unit;
  for (let index = 0; index < vector.length; index++) unit[index] = vector[index] / norm;
  return unit;
}

function dot(left: Float64Array, right: Float64Array): number {
  let sum = 0;
  for (let index = 0; index < left.length; index++) sum += left[index] * right[index];
  return sum;
}
