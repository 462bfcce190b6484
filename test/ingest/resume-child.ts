/**
 * Child process for resume.test.ts: ingests a folder into a FileStore with a deterministic embedder that
 * hangs forever after `hangAfterBatches` embedding calls (announcing it on stdout), so the parent can kill
 * the process in the middle of an ingestion. Run: tsx resume-child.ts <folder> <store-dir> <hangAfterBatches>
 */
import type { EmbedOptions } from '../../src/contracts/embeddings.ts';
import { ingestPaths } from '../../src/ingest/index.ts';
import { FileStore } from '../../stores/file-store/file-store.ts';
import { FakeEmbeddings } from './fakes.ts';

const [folder, storeDirectory, hangAfter] = process.argv.slice(2);

class HangingEmbeddings extends FakeEmbeddings {
  override async embed(texts: string[], options: EmbedOptions): Promise<number[][]> {
    if (this.calls.length >= Number(hangAfter)) {
      process.stdout.write('hanging\n');
      await new Promise(() => {});
    }
    return super.embed(texts, options);
  }
}

const store = new FileStore({ directory: storeDirectory });
await ingestPaths(
  [folder],
  { embeddings: new HangingEmbeddings(2, 1), store },
  {
    baseDirectory: folder,
    chunkSize: 60,
    chunkOverlap: 0,
    chunksPerCommit: 3,
    streamThresholdBytes: 200,
    onProgress: (event) => {
      if (event.type === 'stored') process.stdout.write(`stored ${event.stats.chunksStored}\n`);
    },
  },
);
process.stdout.write('finished\n');
