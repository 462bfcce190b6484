import { describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { ConfigError } from '../../../src/errors.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let index = 0; index < a.length; index++) dot += a[index] * b[index];
  return dot;
}

describe('LocalHashEmbeddings', () => {
  describeEmbeddingsConformance(() => new LocalHashEmbeddings());

  const embedder = new LocalHashEmbeddings();

  it('returns L2-normalised vectors of the declared dimensions, one per text', async () => {
    const vectors = await embedder.embed(['Reset your password from the account page.', 'x'], { inputType: 'document' });
    expect(vectors).toHaveLength(2);
    for (const vector of vectors) {
      expect(vector).toHaveLength(512);
      expect(Math.sqrt(cosine(vector, vector))).toBeCloseTo(1, 5);
    }
  });

  it('is deterministic across instances', () => {
    const again = new LocalHashEmbeddings();
    expect(Array.from(again.embedOne('Billing questions go to finance.'))).toEqual(Array.from(embedder.embedOne('Billing questions go to finance.')));
  });

  it('ranks texts sharing words and word parts above unrelated ones', () => {
    const query = embedder.embedOne('how do I reset my password');
    const related = embedder.embedOne('To reset a forgotten password, open Settings and choose Reset password.');
    const morphology = embedder.embedOne('Passwords are resettable by administrators.');
    const unrelated = embedder.embedOne('The quarterly revenue grew by twelve percent in Europe.');
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, morphology));
    expect(cosine(query, morphology)).toBeGreaterThan(cosine(query, unrelated));
  });

  it('gives text without word characters a fixed unit vector instead of zeros', () => {
    const vector = embedder.embedOne('!!! ???');
    expect(vector[0]).toBe(1);
  });

  it('weights repetition sublinearly', () => {
    const once = embedder.embedOne('invoice refund');
    const many = embedder.embedOne('invoice invoice invoice invoice invoice invoice refund');
    const refund = embedder.embedOne('refund');
    // With linear weighting "refund" would almost vanish from the second text.
    expect(cosine(many, refund)).toBeGreaterThan(0.3 * cosine(once, refund));
  });

  it('validates its options', () => {
    expect(() => new LocalHashEmbeddings({ dimensions: 3 })).toThrow(ConfigError);
    expect(new LocalHashEmbeddings({ dimensions: 64 }).embedOne('a b c')).toHaveLength(64);
  });
});
