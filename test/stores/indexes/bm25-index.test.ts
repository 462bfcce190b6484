import { describe, expect, it } from 'vitest';
import { AxonError, ConfigError, FilterError } from '../../../src/errors.ts';
import { compileFilter, parseFilter } from '../../../src/filter/index.ts';
import { Bm25Index } from '../../../stores/indexes/bm25-index.ts';
import { encodeBm25Snapshot, encodeSearchableBm25Snapshot, type Bm25SnapshotReader } from '../../../stores/indexes/bm25-format.ts';

/** Byte offsets of a version 3 snapshot's sections, from its header (see encodeSearchableBm25Snapshot). */
function sectionsOf(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const headerLength = view.getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength)));
  const lengths = 12 + ((headerLength + 3) & ~3);
  const postingStarts = lengths + 4 * header.documentCount + 4 * (header.termCount + 1);
  const fieldOffsets = postingStarts + 8 * header.termCount + 4;
  const dictionary = fieldOffsets + 4 * (header.documentCount + 1) + 4 * header.documentCount;
  const postings = dictionary + ((header.dictionaryBytes + 3) & ~3);
  return { view, header, postingStarts, fieldOffsets, dictionary, postings, fields: postings + 8 * header.postingCount };
}

/** A reader over the whole snapshot `bytes` that counts the bytes it reads, as a store reads its snapshot file. */
function readerOver(bytes: Uint8Array): Bm25SnapshotReader & { bytesRead: number } {
  return {
    size: bytes.length,
    bytesRead: 0,
    readInto(position, target) {
      if (position + target.length > bytes.length) throw Object.assign(new Error('unexpected end of file'), { code: 'EOF' });
      target.set(bytes.subarray(position, position + target.length));
      this.bytesRead += target.length;
    },
  };
}

/** No stemming or stopwords, so the hand computations below count exactly the words written. */
const PLAIN = { stopwords: 'none', stemmer: 'none' } as const;

function tinyIndex(options: ConstructorParameters<typeof Bm25Index>[0] = {}): Bm25Index {
  const index = new Bm25Index({ tokenizer: PLAIN, ...options });
  index.add([
    { id: 'd1', content: 'apple banana apple' }, // |d| = 3
    { id: 'd2', content: 'banana cherry' }, // |d| = 2
    { id: 'd3', content: 'cherry cherry cherry durian' }, // |d| = 4
  ]);
  return index;
}

// N = 3, avgdl = 3, k1 = 0.9, b = 0.4, so the length norms k1·(1 − b + b·|d|/avgdl) are
// d1: 0.9, d2: 0.78, d3: 1.02; idf(apple) = ln(1 + 2.5/1.5) = ln(8/3), idf(banana) = idf(cherry) = ln(1 + 1.5/2.5) = ln(1.6).
describe('Bm25Index scoring', () => {
  it('scores a single term by hand: idf · tf / (tf + norm)', () => {
    const hits = tinyIndex().search('apple');
    expect(hits).toHaveLength(1);
    expect(hits[0].id).toBe('d1');
    expect(hits[0].score).toBeCloseTo((Math.log(8 / 3) * 2) / 2.9, 12);
    expect(hits[0].score).toBeCloseTo(0.676434, 6);
  });

  it('sums over query terms and ranks by the sum', () => {
    const hits = tinyIndex().search('banana cherry');
    expect(hits.map((hit) => hit.id)).toEqual(['d2', 'd3', 'd1']);
    expect(hits[0].score).toBeCloseTo((2 * Math.log(1.6)) / 1.78, 12); // 0.528094
    expect(hits[1].score).toBeCloseTo((3 * Math.log(1.6)) / 4.02, 12); // 0.350749
    expect(hits[2].score).toBeCloseTo(Math.log(1.6) / 1.9, 12); // 0.247370
  });

  it('only scores documents that contain a query term', () => {
    const index = tinyIndex();
    expect(index.search('durian').map((hit) => hit.id)).toEqual(['d3']);
    expect(index.search('mango')).toEqual([]);
    expect(index.search('   ')).toEqual([]);
  });

  it('counts a repeated query term once per occurrence', () => {
    const index = tinyIndex();
    expect(index.search('apple apple')[0].score).toBeCloseTo(2 * index.search('apple')[0].score, 12);
  });

  it('takes k1 and b from the options', () => {
    // b = 0: no length normalisation, so the norm is k1 for every document.
    const hits = tinyIndex({ k1: 1.2, b: 0 }).search('cherry');
    expect(hits[0]).toEqual({ id: 'd3', score: expect.closeTo((3 * Math.log(1.6)) / 4.2, 12) });
    expect(hits[1]).toEqual({ id: 'd2', score: expect.closeTo(Math.log(1.6) / 2.2, 12) });
  });

  it('breaks equal scores by id, whatever the order documents were indexed in, and honours topK', () => {
    const index = new Bm25Index({ tokenizer: PLAIN });
    index.add([
      { id: 'z', content: 'same words' },
      { id: 'a', content: 'same words' },
      { id: 'm', content: 'same words' },
    ]);
    expect(index.search('same').map((hit) => hit.id)).toEqual(['a', 'm', 'z']);
    expect(index.search('same', { topK: 2 }).map((hit) => hit.id)).toEqual(['a', 'm']);
    expect(index.topK).toBe(50);
  });

  it('ranks the same documents the same, ties included, however they were indexed, removed, re-added or reloaded', () => {
    const documents = Array.from({ length: 40 }, (_, number) => ({
      id: `doc-${String((number * 17) % 40).padStart(2, '0')}`,
      // Four groups of ten documents with identical text, so every score is tied ten ways.
      content: `common ${['alpha', 'bravo', 'charlie', 'delta'][number % 4]} words`,
    }));
    const ranked = (index: Bm25Index, topK: number) => index.search('common alpha', { topK }).map((hit) => `${hit.id} ${hit.score.toFixed(12)}`);
    const forward = new Bm25Index({ tokenizer: PLAIN });
    forward.add(documents);
    const backward = new Bm25Index({ tokenizer: PLAIN });
    backward.add([...documents].reverse());
    // Removing and re-adding moves documents to new numbers, as a store's rows move when it deletes.
    const churned = new Bm25Index({ tokenizer: PLAIN });
    churned.add(documents);
    churned.remove(documents.slice(0, 20).map((document) => document.id));
    churned.add(documents.slice(0, 20).reverse());
    const reloaded = Bm25Index.deserialize(churned.serialize());
    for (const topK of [1, 3, 10, 15, 40]) {
      const expected = ranked(forward, topK);
      expect(expected).toHaveLength(topK);
      expect(ranked(backward, topK)).toEqual(expected);
      expect(ranked(churned, topK)).toEqual(expected);
      expect(ranked(reloaded, topK)).toEqual(expected);
    }
    // Within each score, ids ascend.
    const all = forward.search('common alpha', { topK: 40 });
    for (let at = 1; at < all.length; at++) if (all[at].score === all[at - 1].score) expect(all[at - 1].id < all[at].id).toBe(true);
  });

  it('stems and drops stopwords with the default English tokenizer', () => {
    const index = new Bm25Index();
    index.add([
      { id: 'a', content: 'Connecting the routers' },
      { id: 'b', content: 'The weather is nice' },
    ]);
    expect(index.search('router connections').map((hit) => hit.id)).toEqual(['a']);
    expect(index.search('the is')).toEqual([]);
  });
});

describe('Bm25Index identifiers', () => {
  const index = new Bm25Index();
  index.add([
    { id: 'q4', content: 'Outage report INC-2023-Q4-011: the payment API returned errors.' },
    { id: 'q3', content: 'Outage report INC-2023-Q3-011: the login page was slow.' },
    { id: 'iso', content: 'We are certified to ISO27001 since 2019.' },
    { id: 'mail', content: 'Send the invoice by e-mail to accounting.' },
    { id: 'other', content: 'General notes about 2023 planning and reports.' },
  ]);

  it('ranks the exact identifier first and still finds it by a part', () => {
    expect(index.search('INC-2023-Q4-011')[0].id).toBe('q4');
    expect(index.search('what happened in INC-2023-Q4-011?')[0].id).toBe('q4');
    expect(index.search('Q4').map((hit) => hit.id)).toEqual(['q4']);
    // Written solid, the identifier still matches whole; its runs (inc, 2023, 011) also reach the neighbours.
    expect(index.search('inc2023q4011').map((hit) => hit.id)).toEqual(['q4', 'q3', 'other']);
  });

  it('finds a standard written solid or spaced, and a hyphenated word written solid', () => {
    expect(index.search('ISO 27001')[0].id).toBe('iso');
    expect(index.search('27001').map((hit) => hit.id)).toEqual(['iso']);
    expect(index.search('email').map((hit) => hit.id)).toEqual(['mail']);
    expect(index.search('mail').map((hit) => hit.id)).toEqual(['mail']);
  });
});

describe('Bm25Index add, remove and upsert', () => {
  it('replaces a document added again under the same id', () => {
    const index = tinyIndex();
    index.add([{ id: 'd1', content: 'mango' }]);
    expect(index.count()).toBe(3);
    expect(index.search('apple')).toEqual([]);
    expect(index.search('mango').map((hit) => hit.id)).toEqual(['d1']);
  });

  it('forgets removed documents in the statistics at once', () => {
    const index = tinyIndex();
    expect(index.remove(['d2', 'missing'])).toBe(1);
    expect(index.count()).toBe(2);
    expect(index.has('d2')).toBe(false);
    // Now N = 2, avgdl = 3.5: norm(d1) = 0.9·(0.6 + 0.4·3/3.5), norm(d3) = 0.9·(0.6 + 0.4·4/3.5); df(cherry) = 1.
    const idf = Math.log(1 + 1.5 / 1.5);
    expect(index.search('cherry')).toEqual([{ id: 'd3', score: expect.closeTo((idf * 3) / (3 + 0.9 * (0.6 + (0.4 * 4) / 3.5)), 12) }]);
    expect(index.search('banana')).toEqual([{ id: 'd1', score: expect.closeTo(idf / (1 + 0.9 * (0.6 + (0.4 * 3) / 3.5)), 12) }]);
    expect(index.statistics()).toEqual({ documentCount: 2, termCount: 4, averageDocumentLength: 3.5 });
  });

  it('removes by source, and by source name', () => {
    const index = new Bm25Index({ tokenizer: PLAIN });
    index.add([
      { id: 'a1', content: 'alpha', sourceType: 'file', sourceName: 'a.md' },
      { id: 'a2', content: 'alpha beta', sourceType: 'file', sourceName: 'a.md' },
      { id: 'b1', content: 'alpha', sourceType: 'file', sourceName: 'b.md' },
      { id: 'u1', content: 'alpha', sourceType: 'url', sourceName: 'https://example.com' },
    ]);
    expect(index.removeBySource('file', 'a.md').sort()).toEqual(['a1', 'a2']);
    expect(index.search('alpha').map((hit) => hit.id)).toEqual(['b1', 'u1']);
    expect(index.removeBySource('file')).toEqual(['b1']);
    expect(index.search('alpha').map((hit) => hit.id)).toEqual(['u1']);
  });

  it('stays correct through compaction after many removals and re-adds', () => {
    const index = new Bm25Index({ tokenizer: PLAIN });
    const documents = Array.from({ length: 40 }, (_, number) => ({ id: `doc${number}`, content: `common word${number % 4} unique${number}` }));
    index.add(documents);
    index.remove(documents.filter((_, number) => number % 2 === 1).map((document) => document.id));
    index.add([{ id: 'doc3', content: 'common word3 comeback' }]);
    const reference = new Bm25Index({ tokenizer: PLAIN });
    reference.add([...documents.filter((_, number) => number % 2 === 0), { id: 'doc3', content: 'common word3 comeback' }]);
    for (const query of ['common', 'word0 word3', 'unique7 comeback', 'unique8']) {
      expect(index.search(query, { topK: 100 })).toEqual(reference.search(query, { topK: 100 }));
    }
    expect(index.count()).toBe(21);
  });

  it('validates a whole batch before changing anything', () => {
    const index = tinyIndex();
    expect(() =>
      index.add([
        { id: 'new', content: 'kiwi' },
        { id: '', content: 'x' },
      ]),
    ).toThrow(/documents\[1\]\.id/);
    expect(() => index.add([{ id: 'n', content: 42 as unknown as string }])).toThrow(AxonError);
    expect(() =>
      index.add([
        { id: 'kiwi', content: 'kiwi' },
        { id: 'kiwi', content: 'kiwi again' },
      ]),
    ).toThrow(expect.objectContaining({ code: 'DUPLICATE_ID' }));
    expect(index.count()).toBe(3);
    expect(index.search('kiwi')).toEqual([]);
  });

  it('clears everything', () => {
    const index = tinyIndex();
    index.clear();
    expect(index.count()).toBe(0);
    expect(index.search('apple')).toEqual([]);
    index.add([{ id: 'x', content: 'apple' }]);
    expect(index.search('apple').map((hit) => hit.id)).toEqual(['x']);
  });
});

describe('Bm25Index filters', () => {
  const index = new Bm25Index({ tokenizer: PLAIN });
  index.add([
    { id: 'en1', content: 'invoice invoice invoice', metadata: { lang: 'en', year: 2021 } },
    { id: 'de1', content: 'invoice invoice', sourceType: 'file', sourceName: 'rechnung.md', metadata: { lang: 'de', year: 2023 } },
    { id: 'en2', content: 'invoice', metadata: { lang: 'en', year: 2024 } },
  ]);

  it('applies a metadata filter before ranking, so topK hits all match', () => {
    expect(index.search('invoice', { topK: 1 }).map((hit) => hit.id)).toEqual(['en1']);
    expect(index.search('invoice', { topK: 1, filter: { year: { $gte: 2022 } } }).map((hit) => hit.id)).toEqual(['de1']);
    expect(index.search('invoice', { filter: { lang: 'en' } }).map((hit) => hit.id)).toEqual(['en1', 'en2']);
    expect(index.search('invoice', { filter: { sourceName: 'rechnung.md' } }).map((hit) => hit.id)).toEqual(['de1']);
  });

  it('takes a compiled predicate, combined with a filter', () => {
    const predicate = compileFilter(parseFilter({ lang: 'en' }));
    expect(index.search('invoice', { predicate }).map((hit) => hit.id)).toEqual(['en1', 'en2']);
    expect(index.search('invoice', { predicate, filter: { year: { $gt: 2022 } } }).map((hit) => hit.id)).toEqual(['en2']);
  });

  it('keeps its own copy of the metadata', () => {
    const metadata = { lang: 'fr' };
    const own = new Bm25Index({ tokenizer: PLAIN });
    own.add([{ id: 'x', content: 'bonjour', metadata }]);
    metadata.lang = 'en';
    expect(own.search('bonjour', { filter: { lang: 'fr' } }).map((hit) => hit.id)).toEqual(['x']);
  });

  it('recovers from a predicate that throws', () => {
    const own = tinyIndex();
    expect(() =>
      own.search('banana cherry', {
        predicate: () => {
          throw new Error('boom');
        },
      }),
    ).toThrow('boom');
    expect(own.search('banana cherry')[0]).toEqual({ id: 'd2', score: expect.closeTo((2 * Math.log(1.6)) / 1.78, 12) });
  });

  it('rejects a bad filter, topK or query', () => {
    expect(() => index.search('invoice', { filter: { year: { $near: 1 } } })).toThrow(FilterError);
    expect(() => index.search('invoice', { topK: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_TOP_K' }));
    expect(() => index.search(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: { argument: 'query' } }));
  });
});

describe('Bm25Index persistence', () => {
  it('round-trips through bytes with identical results and options', () => {
    const index = new Bm25Index({ k1: 1.1, b: 0.6, topK: 7, tokenizer: { stemmer: 'none' } });
    index.add([
      { id: 'a', content: 'Ticket INC-2023-Q4-011 about e-mail delivery', sourceType: 'file', sourceName: 'a.md', metadata: { team: 'ops', tags: ['mail'] } },
      { id: 'b', content: 'Delivery of parcels by road', metadata: { team: 'logistics' } },
      { id: 'c', content: 'Temporary', metadata: {} },
    ]);
    index.remove(['c']);
    const copy = Bm25Index.deserialize(index.serialize());
    expect(copy.count()).toBe(2);
    expect([copy.k1, copy.b, copy.topK]).toEqual([1.1, 0.6, 7]);
    expect(copy.tokenizer.options).toEqual(index.tokenizer.options);
    for (const query of ['delivery', 'INC-2023-Q4-011', 'email', 'parcels roads']) {
      expect(copy.search(query)).toEqual(index.search(query));
    }
    expect(copy.search('delivery', { filter: { tags: { $contains: 'mail' } } }).map((hit) => hit.id)).toEqual(['a']);
    copy.add([{ id: 'd', content: 'delivery delivery' }]);
    expect(copy.search('delivery')[0].id).toBe('d');
    expect(copy.removeBySource('file', 'a.md')).toEqual(['a']);
  });

  it('searches bytes handed over with adopt: true where they are, and copies bytes it may not keep', () => {
    const index = tinyIndex();
    const bytes = index.serialize();
    const adopted = Bm25Index.deserialize(bytes, { adopt: true });
    const copied = Bm25Index.deserialize(bytes);
    expect(adopted.search('cherry')).toEqual(index.search('cherry'));
    // The adopted index reads the caller's bytes; the copy does not see them change. 'durian', the last term, holds
    // the last posting: its frequency set to 0 is found by the first search that reads it.
    const { view, header, postings } = sectionsOf(bytes);
    view.setUint32(postings + 8 * (header.postingCount - 1) + 4, 0, true);
    expect(copied.search('durian')).toEqual(index.search('durian'));
    expect(() => adopted.search('durian')).toThrow(/postings of term 3 do not match their checksum/);
    // Unaligned bytes cannot be viewed as 32-bit words: they are copied even when handed over.
    const unaligned = Buffer.concat([Buffer.from('x'), Buffer.from(index.serialize())]).subarray(1);
    const fromUnaligned = Bm25Index.deserialize(unaligned, { adopt: true });
    unaligned.fill(0, 12);
    expect(fromUnaligned.search('cherry')).toEqual(index.search('cherry'));
  });

  it('deserializes from a Node Buffer that views a larger, shared pool', () => {
    const index = new Bm25Index();
    index.add([
      { id: 'a', content: 'refunds for duplicate charges' },
      { id: 'b', content: 'invoices are issued monthly' },
    ]);
    const bytes = index.serialize();
    // Node hands out small Buffers as views into a shared pool, at a non-zero offset.
    const pooled = Buffer.concat([Buffer.from('padding!'), Buffer.from(bytes)]).subarray(8);
    expect(pooled.byteOffset).toBeGreaterThan(0);
    const copy = Bm25Index.deserialize(pooled);
    expect(copy.search('refunds')).toEqual(index.search('refunds'));
    expect(copy.search('invoices')).toEqual(index.search('invoices'));
  });

  it('reads format version 1 snapshots (written before version 2) with identical scores', () => {
    const contents = ['apple banana apple', 'banana cherry', 'cherry cherry cherry durian', 'apple durian elder'];
    const index = new Bm25Index({ tokenizer: PLAIN });
    index.add(contents.map((content, number) => ({ id: `d${number}`, content, metadata: { n: number } })));
    // The forward index of version 1, built the way Bm25Index built it: terms numbered by first appearance.
    const terms: string[] = [];
    const starts = [0];
    const forward: number[] = [];
    const lengths: number[] = [];
    for (const content of contents) {
      const { terms: words, length } = index.tokenizer.analyze(content);
      const counts = new Map<number, number>();
      for (const word of words) {
        if (!terms.includes(word)) terms.push(word);
        counts.set(terms.indexOf(word), (counts.get(terms.indexOf(word)) ?? 0) + 1);
      }
      for (const [term, count] of counts) forward.push(term, count);
      starts.push(forward.length);
      lengths.push(length);
    }
    const bytes = encodeBm25Snapshot({
      k1: index.k1,
      b: index.b,
      topK: index.topK,
      tokenizer: index.tokenizer.options,
      terms,
      documents: contents.map((_, number) => ({ id: `d${number}`, sourceType: '', sourceName: '', metadata: { n: number } })),
      lengths: Uint32Array.from(lengths),
      starts: Uint32Array.from(starts),
      forward: Uint32Array.from(forward),
    });
    expect(new DataView(bytes.buffer).getUint32(4, true)).toBe(1);
    const old = Bm25Index.deserialize(bytes);
    for (const query of ['apple', 'cherry durian', 'banana banana elder', 'nothing']) expect(old.search(query)).toEqual(index.search(query));
    expect(old.search('apple', { filter: { n: { $gte: 1 } } })).toEqual(index.search('apple', { filter: { n: { $gte: 1 } } }));
    // Saved again, it is written as version 3, with the same results.
    const saved = old.serialize();
    expect(new DataView(saved.buffer, saved.byteOffset).getUint32(4, true)).toBe(3);
    expect(Bm25Index.deserialize(saved).search('cherry durian')).toEqual(index.search('cherry durian'));
  });

  it('searches a loaded snapshot as is, and unpacks it on the first change', () => {
    const index = tinyIndex();
    const bytes = index.serialize();
    const copy = Bm25Index.deserialize(bytes);
    bytes.fill(0); // the index owns its copy
    expect(copy.serialize()).toEqual(index.serialize());
    expect(copy.statistics()).toEqual(index.statistics());
    expect(copy.search('cherry banana')).toEqual(index.search('cherry banana'));
    expect(copy.has('d2')).toBe(true);
    expect([...copy.ids()].sort()).toEqual(['d1', 'd2', 'd3']);
    copy.add([{ id: 'd4', content: 'apple apple apple' }]);
    index.add([{ id: 'd4', content: 'apple apple apple' }]);
    copy.remove(['d2']);
    index.remove(['d2']);
    for (const query of ['apple', 'cherry', 'banana durian']) expect(copy.search(query)).toEqual(index.search(query));
    expect(Bm25Index.deserialize(copy.serialize()).search('apple cherry')).toEqual(index.search('apple cherry'));
  });

  it('round-trips an empty index', () => {
    const copy = Bm25Index.deserialize(new Bm25Index().serialize());
    expect(copy.count()).toBe(0);
    expect(copy.search('anything')).toEqual([]);
  });

  it('reads format version 2 snapshots (no checksums; written before version 3) with identical scores', () => {
    const index = tinyIndex();
    // tinyIndex's terms in the order first added, and each term's postings (document number, frequency).
    const terms = ['apple', 'banana', 'cherry', 'durian'];
    const pairs = [
      [0, 2],
      [0, 1, 1, 1],
      [1, 1, 2, 3],
      [2, 1],
    ];
    const postingStarts = new Uint32Array(4);
    pairs.forEach((_, term) => {
      if (term > 0) postingStarts[term] = postingStarts[term - 1] + pairs[term - 1].length;
    });
    const bytes = encodeSearchableBm25Snapshot(
      {
        k1: index.k1,
        b: index.b,
        topK: index.topK,
        tokenizer: index.tokenizer.options,
        terms,
        documents: ['d1', 'd2', 'd3'].map((id) => ({ id, sourceType: '', sourceName: '', metadata: {} })),
        lengths: Uint32Array.from([3, 2, 4]),
        postingStarts,
        postingSizes: Uint32Array.from(pairs.map((list) => list.length / 2)),
        postings: Uint32Array.from(pairs.flat()),
      },
      2,
    );
    expect(new DataView(bytes.buffer).getUint32(4, true)).toBe(2);
    const old = Bm25Index.deserialize(bytes);
    for (const query of ['apple', 'cherry durian', 'banana banana', 'nothing']) expect(old.search(query)).toEqual(index.search(query));
    expect(new DataView(old.serialize().buffer).getUint32(4, true)).toBe(2); // unchanged, it is the same bytes
    old.add([{ id: 'd4', content: 'fig' }]);
    const saved = old.serialize();
    expect(new DataView(saved.buffer, saved.byteOffset).getUint32(4, true)).toBe(3);
    index.add([{ id: 'd4', content: 'fig' }]);
    expect(Bm25Index.deserialize(saved).search('cherry fig')).toEqual(index.search('cherry fig'));
    // A version 2 snapshot has no checksums to read it part by part: it is read whole.
    expect(() => Bm25Index.deserialize(bytes, { reader: readerOver(bytes) })).toThrow(/format version 2, not 3/);
  });

  it('searches the head of a snapshot alone, reading each term’s postings and each hit’s fields when first needed', () => {
    const index = new Bm25Index({ tokenizer: PLAIN });
    const words = Array.from({ length: 60 }, (_, number) => `w${number}`);
    index.add(
      Array.from({ length: 200 }, (_, number) => ({
        id: `doc-${number}`,
        content: `${words[number % 60]} ${words[(number * 7) % 60]} common`,
        metadata: { n: number },
      })),
    );
    const bytes = index.serialize();
    const head = Bm25Index.snapshotHeadBytes(bytes)!;
    const { postings } = sectionsOf(bytes);
    expect(head).toBe(postings);
    const reader = readerOver(bytes);
    const lazy = Bm25Index.deserialize(bytes.slice(0, head), { reader });
    expect(reader.bytesRead).toBe(0);
    expect(lazy.search('w3 w10', { topK: 5 })).toEqual(index.search('w3 w10', { topK: 5 }));
    // Two terms' postings (a few dozen pairs) and the fields of five hits: a small part of the body.
    const firstRead = reader.bytesRead;
    expect(firstRead).toBeGreaterThan(0);
    expect(firstRead).toBeLessThan((bytes.length - head) / 10);
    expect(lazy.search('w3 w10', { topK: 5 })).toEqual(index.search('w3 w10', { topK: 5 }));
    expect(reader.bytesRead).toBe(firstRead); // read once, kept
    expect(lazy.search('common', { filter: { n: { $lt: 3 } } })).toEqual(index.search('common', { filter: { n: { $lt: 3 } } }));
    expect(lazy.statistics()).toEqual(index.statistics());
    // Saving it again reads the rest; the first change unpacks it, reading every posting.
    expect(lazy.serialize()).toEqual(bytes);
    lazy.remove(['doc-3']);
    index.remove(['doc-3']);
    expect(lazy.search('w3 common', { topK: 10 })).toEqual(index.search('w3 common', { topK: 10 }));
    // A head whose size does not match what the reader holds is refused.
    expect(() => Bm25Index.deserialize(bytes.slice(0, head), { reader: { ...readerOver(bytes), size: bytes.length - 4 } })).toThrow(
      expect.objectContaining({ code: 'STORE_CORRUPT' }),
    );
    expect(() => Bm25Index.deserialize(bytes.slice(0, head - 4), { reader: readerOver(bytes) })).toThrow(/truncated/);
  });

  it('finds damage in a part read later by its checksum, and a file cut short or unreadable since the load', () => {
    const index = tinyIndex();
    const bytes = index.serialize();
    const { view, header, postings, fields } = sectionsOf(bytes);
    const head = Bm25Index.snapshotHeadBytes(bytes)!;
    const damaged = bytes.slice();
    damaged[postings + 1] ^= 0x01; // 'apple', the first term: one bit of its first posting
    damaged[fields + 3] ^= 0x01; // one bit of document 0's fields
    const lazy = Bm25Index.deserialize(damaged.slice(0, head), { reader: readerOver(damaged) });
    expect(lazy.search('durian')).toEqual(index.search('durian'));
    expect(() => lazy.search('cherry banana')).toThrow(/fields of document 0 do not match their checksum/);
    expect(() => lazy.search('apple')).toThrow(/postings of term 0 do not match their checksum/);
    expect(() => Bm25Index.deserialize(damaged).search('apple')).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT', component: 'bm25-index' }));
    // Saving it again checks what it reads first: the damage is never written out under a new checksum.
    expect(() => Bm25Index.deserialize(damaged.slice(0, head), { reader: readerOver(damaged) }).serialize()).toThrow(/do not match their checksum/);
    // The file shrank since the load: STORE_CORRUPT; another failure of the file system: STORE_IO.
    const short = Bm25Index.deserialize(bytes.slice(0, head), { reader: { ...readerOver(bytes.subarray(0, header.postingCount)), size: bytes.length } });
    expect(() => short.search('durian')).toThrow(/shorter than when it was loaded/);
    const failing: Bm25SnapshotReader = {
      size: bytes.length,
      readInto: () => {
        throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
      },
    };
    expect(() => Bm25Index.deserialize(bytes.slice(0, head), { reader: failing }).search('apple')).toThrow(
      expect.objectContaining({ code: 'STORE_IO', component: 'bm25-index' }),
    );
    expect(view.getUint32(4, true)).toBe(3);
  });

  it('refuses damaged bytes with STORE_CORRUPT', () => {
    const bytes = tinyIndex().serialize();
    const corrupt = (data: Uint8Array) => () => Bm25Index.deserialize(data);
    expect(corrupt(bytes.subarray(0, bytes.length - 4))).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(corrupt(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))).toThrow(/signature/);
    const flipped = bytes.slice();
    flipped[20] ^= 0xff; // inside the JSON header
    expect(corrupt(flipped)).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    const { header, postings } = sectionsOf(bytes);
    expect(header).toMatchObject({ version: 3, documentCount: 3, termCount: 4 });
    // A term's postings are checked when first read ('apple', the first term, holds the first posting), and all of
    // them before the first change unpacks the snapshot: the damage is STORE_CORRUPT then, never a wrong result.
    const badDocument = bytes.slice();
    new DataView(badDocument.buffer).setUint32(postings, 9999, true);
    expect(Bm25Index.deserialize(badDocument).search('banana')).toHaveLength(2);
    expect(() => Bm25Index.deserialize(badDocument).search('apple')).toThrow(/do not match their checksum/);
    expect(() => Bm25Index.deserialize(badDocument).add([{ id: 'd4', content: 'fig' }])).toThrow(/do not match their checksum/);
    expect(() => Bm25Index.deserialize(badDocument).remove(['d1'])).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    const unsorted = bytes.slice();
    const dictionary = new TextDecoder().decode(unsorted).indexOf('applebanana');
    unsorted.set(new TextEncoder().encode('bananaapple'), dictionary); // offsets now cut 'banan' | 'aapple': out of order
    expect(corrupt(unsorted)).toThrow(/not sorted/);
    const badField = bytes.slice();
    const field = new TextDecoder().decode(badField).lastIndexOf('["d3"');
    badField[field] = 0x7b; // '{': document 2's fields are no longer an array
    const loaded = Bm25Index.deserialize(badField);
    // Fields are parsed when a hit needs them: the damage is STORE_CORRUPT then, never a wrong result.
    expect(() => loaded.search('durian')).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    const badOptions = bytes.slice();
    badOptions.set(new TextEncoder().encode('"b":4.0'), Buffer.from(bytes).indexOf('"b":0.4')); // same length: only the value changes
    expect(corrupt(badOptions)).toThrow(/its options are invalid/);
  });
});

describe('a snapshot vocabulary out of order', () => {
  // An ASCII vocabulary is checked by the load kernel (WebAssembly), any other by JavaScript: both refuse the same.
  const swapped = (words: [string, string], replace: string) => {
    const index = new Bm25Index();
    index.add([{ id: 'd1', content: words.join(' ') }]);
    const bytes = index.serialize();
    const at = Buffer.from(bytes).indexOf(Buffer.from(words.join(''), 'utf8'));
    expect(at).toBeGreaterThan(0);
    const damaged = bytes.slice();
    damaged.set(new TextEncoder().encode(replace), at);
    return () => Bm25Index.deserialize(damaged);
  };

  it('is refused, in ASCII and beyond, when two terms swap or repeat', () => {
    expect(swapped(['zorb', 'zorc'], 'zorbzorc')).not.toThrow();
    expect(swapped(['zorb', 'zorc'], 'zorczorb')).toThrow(/not sorted/);
    expect(swapped(['zorb', 'zorc'], 'zorbzorb')).toThrow(/not sorted/);
    expect(swapped(['zorb', 'zorc'], 'zorczorc')).toThrow(/not sorted/);
    expect(swapped(['zörb', 'zörc'], 'zörczörb')).toThrow(/not sorted/);
    expect(swapped(['zörb', 'zörc'], 'zörbzörb')).toThrow(/not sorted/);
  });

  it('is accepted when in order, a shorter prefix first, whatever the letters', () => {
    const words = ['kayak', 'kayaking', 'zebra', 'zèbre', 'straße', 'ｆｕｌｌ', '𠀀字', 'aardvark', 'ab', 'abc'];
    const index = new Bm25Index();
    index.add(words.map((word, number) => ({ id: `d${number}`, content: word })));
    const again = Bm25Index.deserialize(index.serialize());
    for (const word of words) expect(again.search(word)).toEqual(index.search(word));
    const ascii = new Bm25Index();
    ascii.add([{ id: 'd1', content: 'ab abc abd b ba bb' }]);
    expect(() => Bm25Index.deserialize(ascii.serialize())).not.toThrow();
  });
});

describe('Bm25Index options', () => {
  it('rejects invalid parameters with a ConfigError', () => {
    expect(() => new Bm25Index({ b: 1.5 })).toThrow(ConfigError);
    expect(() => new Bm25Index({ k1: -1 })).toThrow(/k1/);
    expect(() => new Bm25Index({ tokenizer: { stemmer: 'lancaster' as 'porter' } })).toThrow(/tokenizer\.stemmer/);
  });
});

describe('Bm25Index against a brute-force BM25', () => {
  /** A small deterministic generator (mulberry32), so the corpus is the same on every run. */
  function generator(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let value = Math.imul(state ^ (state >>> 15), 1 | state);
      value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
      return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
    };
  }

  it('ranks exactly like the formula computed document by document, through upserts, removals and a reload', () => {
    const random = generator(7);
    const vocabulary = Array.from({ length: 40 }, (_, number) => `w${String.fromCharCode(97 + (number % 26))}${Math.floor(number / 26)}x`);
    const text = () => Array.from({ length: 1 + Math.floor(random() * 30) }, () => vocabulary[Math.floor(random() ** 2 * vocabulary.length)]).join(' ');
    const corpus = new Map<string, string>();
    const index = new Bm25Index({ tokenizer: PLAIN });
    for (let round = 0; round < 4; round++) {
      const batch = Array.from({ length: 60 }, () => ({ id: `doc${Math.floor(random() * 150)}`, content: text() }));
      const unique = [...new Map(batch.map((document) => [document.id, document])).values()];
      index.add(unique);
      for (const document of unique) corpus.set(document.id, document.content);
      const removed = [...corpus.keys()].filter(() => random() < 0.2);
      index.remove(removed);
      for (const id of removed) corpus.delete(id);
    }
    const reloaded = Bm25Index.deserialize(index.serialize());

    const analyzed = new Map([...corpus].map(([id, content]) => [id, index.tokenizer.analyze(content)]));
    const averageLength = [...analyzed.values()].reduce((sum, entry) => sum + entry.length, 0) / analyzed.size;
    const documentFrequency = (term: string) => [...analyzed.values()].filter((entry) => entry.terms.includes(term)).length;
    const bruteForce = (query: string) => {
      const queryTerms = index.tokenizer.tokenize(query);
      const frequencies = new Map(queryTerms.map((term) => [term, documentFrequency(term)]));
      const results: { id: string; score: number }[] = [];
      for (const [id, { terms, length }] of analyzed) {
        let score = 0;
        for (const term of new Set(queryTerms)) {
          const tf = terms.filter((candidate) => candidate === term).length;
          if (tf === 0) continue;
          const df = frequencies.get(term)!;
          const idf = Math.log(1 + (analyzed.size - df + 0.5) / (df + 0.5));
          const qtf = queryTerms.filter((candidate) => candidate === term).length;
          score += (qtf * idf * tf) / (tf + 0.9 * (1 - 0.4 + (0.4 * length) / averageLength));
        }
        if (score > 0) results.push({ id, score });
      }
      return results.sort((left, right) => right.score - left.score);
    };

    expect(index.count()).toBe(corpus.size);
    for (let query = 0; query < 25; query++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 4) }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
      const all = bruteForce(text);
      const expected = all.slice(0, 10);
      for (const candidate of [index, reloaded]) {
        const hits = candidate.search(text, { topK: 10 });
        expect(hits.map((hit) => hit.score)).toEqual(expected.map((hit) => expect.closeTo(hit.score, 9)));
        // Ids must agree wherever the score is not tied with a neighbour.
        hits.forEach((hit) => {
          const tied = all.filter((other) => Math.abs(other.score - hit.score) < 1e-9).map((other) => other.id);
          expect(tied).toContain(hit.id);
        });
      }
    }
  });
});
