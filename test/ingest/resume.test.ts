import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestPaths } from '../../src/ingest/index.ts';
import { FileStore } from '../../stores/file-store/file-store.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { FakeEmbeddings } from './fakes.ts';

const childScript = fileURLToPath(new URL('./resume-child.ts', import.meta.url));
const options = { chunkSize: 60, chunkOverlap: 0, chunksPerCommit: 3, streamThresholdBytes: 200 };

let root: string;
let folder: string;
let storeDirectory: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-resume-'));
  folder = join(root, 'docs');
  storeDirectory = join(root, 'store');
  await mkdir(folder, { recursive: true });
  for (let file = 0; file < 6; file++) {
    const sentences = Array.from({ length: 4 }, (_, index) => `File ${file} sentence ${index} talks about gears.`);
    await writeFile(join(folder, `note-${file}.txt`), sentences.join(' '));
  }
  // Larger than streamThresholdBytes and with more chunks than chunksPerCommit: committed window by window.
  await writeFile(
    join(folder, 'a-records.jsonl'),
    Array.from({ length: 12 }, (_, index) => JSON.stringify({ text: `Record ${index} about sprockets and chains.` })).join('\n'),
  );
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Run the child until it announces that it hangs, then kill it. Returns what it printed. */
function runChildAndKill(hangAfterBatches: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, folder, storeDirectory, String(hangAfterBatches)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    child.stdout.on('data', (data: Buffer) => {
      output += data.toString();
      if (output.includes('hanging')) child.kill('SIGKILL');
    });
    child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
    child.on('error', reject);
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(output) : reject(new Error(`child ended without hanging: ${output}${errors}`))));
  });
}

describe('resuming an interrupted ingestion', () => {
  it('converges to exactly the chunks of an uninterrupted run: no duplicate, no loss', async () => {
    const reference = new MemoryStore();
    const expected = await ingestPaths([folder], { embeddings: new FakeEmbeddings(2, 1), store: reference }, { baseDirectory: folder, ...options });
    expect(expected.ok).toBe(true);
    const expectedIds = (await reference.getBySource('file')).map((document) => document.id).sort();

    // Killed part-way. The JSONL file comes first; its 12 chunks are committed in windows of 3, each embedded in
    // batches of 2 and 1. Hanging on the 6th batch leaves two windows (6 chunks) of it stored, and no note.
    const printed = await runChildAndKill(5);
    expect(printed).toMatch(/stored \d+\n/);
    expect(printed).not.toContain('finished');
    const interrupted = new FileStore({ directory: storeDirectory });
    expect(await interrupted.count()).toBe(6);
    expect((await interrupted.getBySource('file', 'a-records.jsonl')).map((document) => document.metadata.chunkIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    await interrupted.close();

    const store = new FileStore({ directory: storeDirectory });
    const resumed = await ingestPaths([folder], { embeddings: new FakeEmbeddings(2, 1), store }, { baseDirectory: folder, ...options });
    expect(resumed.ok).toBe(true);
    expect(resumed.ingested.map((file) => [file.sourceName, file.status, file.embeddingsReused])[0]).toEqual(['a-records.jsonl', 'changed', 6]);
    const ids = (await store.getBySource('file')).map((document) => document.id).sort();
    expect(ids).toEqual(expectedIds);
    expect(await store.count()).toBe(expectedIds.length);

    const again = await ingestPaths([folder], { embeddings: new FakeEmbeddings(2, 1), store }, { baseDirectory: folder, ...options });
    expect(again.filesUnchanged).toBe(7);
    expect(again.chunksAdded).toBe(0);
    await store.close();
  });
});
