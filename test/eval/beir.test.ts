import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { beirDocuments, beirDocumentText, loadBeir } from '../../src/eval/beir.ts';

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function dataset(files: { corpus?: string; queries?: string; qrels?: string }): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'axon-beir-'));
  folders.push(folder);
  await mkdir(join(folder, 'qrels'));
  if (files.corpus !== undefined) await writeFile(join(folder, 'corpus.jsonl'), files.corpus);
  if (files.queries !== undefined) await writeFile(join(folder, 'queries.jsonl'), files.queries);
  if (files.qrels !== undefined) await writeFile(join(folder, 'qrels', 'test.tsv'), files.qrels);
  return folder;
}

const CORPUS = [
  JSON.stringify({ _id: 'd1', title: 'Aspirin', text: 'Aspirin reduces fever.', metadata: {} }),
  JSON.stringify({ _id: 'd2', title: '', text: 'Vitamin C and colds.', metadata: { year: 2001 } }),
  JSON.stringify({ _id: 3, text: 'Numeric id.' }),
  '',
].join('\n');
const QUERIES = [
  JSON.stringify({ _id: 'q1', text: 'Does aspirin reduce fever?', metadata: {} }),
  JSON.stringify({ _id: 'q2', text: 'Unjudged question' }),
  JSON.stringify({ _id: 'q3', text: 'Vitamin C prevents colds' }),
].join('\n');
const QRELS = 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq3\td2\t2\nq3\t3\t0\n';

describe('loadBeir', () => {
  it('loads the corpus, only the judged queries and graded qrels', async () => {
    const folder = await dataset({ corpus: CORPUS, queries: QUERIES, qrels: QRELS });
    const data = await loadBeir(folder);
    expect(data.split).toBe('test');
    expect(data.corpus).toEqual([
      { id: 'd1', title: 'Aspirin', text: 'Aspirin reduces fever.', metadata: {} },
      { id: 'd2', title: '', text: 'Vitamin C and colds.', metadata: { year: 2001 } },
      { id: '3', title: '', text: 'Numeric id.', metadata: {} },
    ]);
    expect(data.queries.map((query) => query.id)).toEqual(['q1', 'q3']);
    expect(data.qrels.get('q3')).toEqual(
      new Map([
        ['d2', 2],
        ['3', 0],
      ]),
    );
    expect(data.warnings).toEqual([]);
  });

  it('joins title and text as the baselines index them', () => {
    expect(beirDocumentText({ title: 'Aspirin', text: 'Reduces fever.' })).toBe('Aspirin Reduces fever.');
    expect(beirDocumentText({ title: '', text: 'Reduces fever.' })).toBe('Reduces fever.');
  });

  it('makes the documents a retriever indexes: the joined text, the title kept in metadata, empty passages counted and left out', () => {
    const { documents, empty } = beirDocuments({
      name: 'tiny',
      corpus: [
        { id: 'd1', title: 'Aspirin', text: 'Reduces fever.', metadata: { year: 1899 } },
        { id: 'd2', title: '', text: 'No title here.', metadata: {} },
        { id: 'd3', title: '', text: '  ', metadata: {} },
      ],
    });
    expect(documents).toEqual([
      { id: 'd1', content: 'Aspirin Reduces fever.', sourceType: 'beir', sourceName: 'tiny', metadata: { year: 1899, title: 'Aspirin' } },
      { id: 'd2', content: 'No title here.', sourceType: 'beir', sourceName: 'tiny', metadata: {} },
    ]);
    expect(empty).toBe(1);
  });

  it('warns about judged documents missing from the corpus', async () => {
    const folder = await dataset({ corpus: CORPUS, queries: QUERIES, qrels: `${QRELS}q1\tgone\t1\n` });
    expect((await loadBeir(folder)).warnings).toEqual([expect.stringMatching(/^1 judged document\(s\) are not in corpus\.jsonl \(gone\)/)]);
  });

  it('names the missing file and the expected layout', async () => {
    const folder = await dataset({ corpus: CORPUS, queries: QUERIES });
    await expect(loadBeir(folder)).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(join('qrels', 'test.tsv')) });
    await expect(loadBeir(join(folder, 'nowhere'))).rejects.toThrow(/No BEIR folder .*corpus\.jsonl, queries\.jsonl and qrels/);
    await expect(loadBeir(folder, { split: 'dev' })).rejects.toThrow(/dev\.tsv/);
  });

  it('names the file and line of malformed data', async () => {
    const badJson = await dataset({ corpus: `${CORPUS}{"_id": "d4", "text": `, queries: QUERIES, qrels: QRELS });
    await expect(loadBeir(badJson)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/corpus\.jsonl:4 is not valid JSON/) });
    const noId = await dataset({ corpus: '{"text": "x"}\n', queries: QUERIES, qrels: QRELS });
    await expect(loadBeir(noId)).rejects.toThrow(/corpus\.jsonl:1 has no "_id"/);
    const badQrels = await dataset({ corpus: CORPUS, queries: QUERIES, qrels: 'query-id\tcorpus-id\tscore\nq1 d1 1\n' });
    await expect(loadBeir(badQrels)).rejects.toThrow(/test\.tsv:2 is not "query-id<TAB>corpus-id<TAB>score"/);
    const duplicate = await dataset({ corpus: `${CORPUS}\n${JSON.stringify({ _id: 'd1', text: 'again' })}`, queries: QUERIES, qrels: QRELS });
    await expect(loadBeir(duplicate)).rejects.toMatchObject({ code: 'DUPLICATE_ID' });
    const unknownQuery = await dataset({ corpus: CORPUS, queries: QUERIES, qrels: `${QRELS}q7\td1\t1\n` });
    await expect(loadBeir(unknownQuery)).rejects.toThrow(/judges 1 query absent from queries\.jsonl \(q7\)/);
    const empty = await dataset({ corpus: CORPUS, queries: QUERIES, qrels: 'query-id\tcorpus-id\tscore\n' });
    await expect(loadBeir(empty)).rejects.toThrow(/holds no judgments/);
  });

  const scifact = resolve(import.meta.dirname, '../../../shared/eval/scifact');
  it.skipIf(!existsSync(scifact))('reads the shared SciFact copy: 5,183 documents, 300 judged test queries', async () => {
    const data = await loadBeir(scifact);
    expect(data.corpus).toHaveLength(5183);
    expect(data.queries).toHaveLength(300);
    expect([...data.qrels.values()].reduce((sum, judgments) => sum + judgments.size, 0)).toBe(339);
  });
});
