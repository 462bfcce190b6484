import { z } from 'zod';
import type { EmbedOptions, EmbeddingsCapabilities, EmbeddingsIdentity, EmbeddingsProvider, SimilarityScale } from '../../src/contracts/embeddings.ts';
import { throwIfAborted } from '../../src/errors.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertTexts } from '../shared/chat-input.ts';

export const localHashEmbeddingsOptionsSchema = z
  .object({
    /** Length of every vector. Larger means fewer hash collisions and more memory. @default 512 */
    dimensions: z.number().int().min(16).max(8192).default(512),
    /** Character n-gram lengths taken inside each word (catches morphology and typos). @default [3, 4, 5] */
    characterNgrams: z.array(z.number().int().min(2).max(8)).default([3, 4, 5]),
    /** Weight of a whole word feature. @default 1 */
    wordWeight: z.number().min(0).default(1),
    /** Weight of a word bigram feature (captures short phrases). @default 0.6 */
    bigramWeight: z.number().min(0).default(0.6),
    /** Total weight shared by a word's character n-grams. @default 0.8 */
    characterNgramWeight: z.number().min(0).default(0.8),
  })
  .strict();

export type LocalHashEmbeddingsOptions = z.input<typeof localHashEmbeddingsOptionsSchema>;

const NAME = 'local-hash-embeddings';
/**
 * The version of the hashing scheme, in the identity: change it whenever a change to this file changes any vector
 * (features, hashing, weighting), so cached vectors of the old scheme are never served for the new one.
 */
const HASHING_SCHEME = 'feature-hashing-1';

/**
 * The hashing embedder's similarity scale, measured with `bench/similarity-scale.ts` (default options): on
 * SciFact's 300 test queries 74.6 % of the judged-relevant passages reach 0.2 and 99 % of the queries have a
 * passage at or above it (on HotpotQA-500, first 300 queries: 89.5 % and 99.7 %); the median best match is
 * 0.324 (0.416). At 0.65, the contract's generic default, no SciFact query has any result.
 */
export const LOCAL_HASH_SIMILARITY: SimilarityScale = Object.freeze({
  threshold: 0.2,
  confidentMargin: 0.05,
  calibration: 'SciFact test (300 queries): 74.6% of judged-relevant passages reach 0.2, median best match 0.324',
});

/**
 * A deterministic, offline embedder: feature hashing of words, word bigrams and character n-grams with
 * sublinear term weighting (1 + ln tf), signed buckets to cancel collision bias, L2-normalised.
 * No model, no network: the same text gives the same vector on every machine.
 *
 * It captures lexical overlap, not meaning: good enough to make Axon work out of the box and to test
 * pipelines; use a neural embedder for semantic search.
 */
export class LocalHashEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  readonly dimensions: number;
  readonly maxBatchSize = 1024;
  readonly maxParallelCalls = 1;
  /** Hashed words and character n-grams: a lexical signal, so pipelines let BM25 lead (see `retrievalDefaultsFor`). */
  readonly capabilities: EmbeddingsCapabilities = Object.freeze({ lexical: true });
  readonly similarity = LOCAL_HASH_SIMILARITY;
  /** The hashing scheme's version and every option, all of which change the vectors. */
  readonly identity: EmbeddingsIdentity;
  private readonly options: z.output<typeof localHashEmbeddingsOptionsSchema>;

  constructor(options: LocalHashEmbeddingsOptions = {}) {
    this.options = parseOptions(localHashEmbeddingsOptionsSchema, options, NAME);
    this.dimensions = this.options.dimensions;
    const { dimensions, ...settings } = this.options;
    this.identity = Object.freeze({ provider: 'local-hash', model: HASHING_SCHEME, dimensions, settings });
  }

  async embed(texts: string[], options: EmbedOptions): Promise<Float32Array[]> {
    throwIfAborted(options.signal, NAME);
    assertTexts(texts, this.maxBatchSize, 'texts', NAME);
    const vectors = texts.map((text) => this.embedOne(text));
    // Computed here, by no service: nothing was metered.
    options.onUsage?.({});
    return vectors;
  }

  /** Embed one text synchronously. */
  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const words = wordsOf(text);
    // Feature → how often it occurs; the prefix (w:, b:, c<n>:) says which weight applies.
    const counts = new Map<string, number>();
    const count = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1);
    const { wordWeight, bigramWeight, characterNgramWeight, characterNgrams } = this.options;
    const ngramWeight = characterNgramWeight / characterNgrams.length;
    for (let index = 0; index < words.length; index++) {
      const word = words[index];
      count(`w:${word}`);
      if (index + 1 < words.length) count(`b:${word} ${words[index + 1]}`);
      const padded = `<${word}>`;
      for (const size of characterNgrams) {
        for (let start = 0; start + size <= padded.length; start++) count(`c${size}:${padded.slice(start, start + size)}`);
      }
    }
    for (const [feature, occurrences] of counts) {
      const kind = feature.charCodeAt(0);
      let weight = kind === 119 /* w */ ? wordWeight : kind === 98 /* b */ ? bigramWeight : ngramWeight;
      // Sublinear term frequency: the tenth repetition of a word says much less than the first.
      weight *= 1 + Math.log(occurrences);
      const hash = fnv1a(feature);
      const bucket = hash % this.dimensions;
      // A second, independent bit decides the sign so colliding features cancel out on average.
      const sign = (murmurMix(hash) & 1) === 0 ? 1 : -1;
      vector[bucket] += sign * weight;
    }
    let norm = 0;
    for (let index = 0; index < vector.length; index++) norm += vector[index] * vector[index];
    if (norm === 0) {
      // Text with no word characters: a fixed unit vector keeps cosine defined and the store consistent.
      vector[0] = 1;
      return vector;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let index = 0; index < vector.length; index++) vector[index] *= scale;
    return vector;
  }
}

// --- Internal helpers ---

/** Lowercased runs of letters and digits, Unicode-aware; accents are folded so "café" matches "cafe". */
function wordsOf(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function murmurMix(value: number): number {
  let hash = value ^ (value >>> 16);
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}
