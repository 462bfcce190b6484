/**
 * The options of `FileStore` (file-store.ts): where the store lives, how it searches, which derived indexes it
 * keeps, and the permissions of what it creates.
 */
import { z } from 'zod';
import { annOptionSchema } from './file-store-ann.ts';
import { fileModeSchema } from './file-store-format.ts';
import { keywordIndexOptionSchema } from '../indexes/keyword-index-support.ts';
import { vectorPrecisionSchema } from '../indexes/vector-index.ts';

export const fileStoreOptionsSchema = z
  .object({
    /** Folder holding the store (created on the first write). The CLI uses `.axon`. */
    directory: z.string().min(1),
    /** Number of results of `search` when the query does not say. @default 50 */
    topK: z.number().int().min(1).default(50),
    /** How long a write waits for another process's write lock before `STORE_LOCKED`, in milliseconds. @default 5000 */
    lockTimeoutMs: z.number().int().min(0).default(5000),
    /** Merge segments and drop deleted documents in the background of writes. @default true */
    autoCompact: z.boolean().default(true),
    /**
     * Keep a BM25 keyword index beside the vectors, persisted with them, for keyword and hybrid search:
     * `true`, `false`, or the index's options (`{ k1, b, tokenizer }`, see `Bm25Index`). On SciFact it adds
     * about a fifth to ingestion time and a quarter to the size on disk (docs/stores.md has the figures).
     * @default true
     */
    keywordIndex: keywordIndexOptionSchema,
    /** `exact` (float32 scan) or `int8` (int8 scan with an exact re-score of the best candidates; see `VectorIndex`). @default 'exact' */
    precision: vectorPrecisionSchema,
    /**
     * An HNSW graph persisted with the vectors, for collections too large to scan per query: `false`, `true`,
     * or `{ minDocuments, m, efConstruction, ef }`. Unfiltered searches of a store holding `minDocuments` or
     * more take the graph's `ef` best candidates and score those exactly; filtered searches stay exact
     * scans. It adds the graph's build time to every write (docs/stores.md has the figures). @default false
     */
    ann: annOptionSchema,
    /**
     * Permissions of the files the store creates (its segments, manifest, index snapshots, lock), as a number
     * (`0o640`) or an octal string (`"640"`). The folder, when the store creates it, gets the same with search
     * (x) wherever read is given: `0o600` makes it `0o700`. The process's umask still applies. The default keeps
     * the documents (and their text) readable by their owner only. @default 0o600
     */
    fileMode: fileModeSchema,
    /**
     * Take in what other processes wrote before each operation: `true` reads the manifest's generation (its first
     * bytes) at the start of every read and, when another process committed since, brings what this process holds
     * up to date in place (new segments added, deleted documents dropped, newer index snapshots adopted), so a
     * search that starts after another process's `add` returned sees it. `false` pins the generation this process
     * loaded: its reads keep answering from it until its own next write, `refresh()`, or `close()`. Either way one
     * operation answers from one generation. @default true
     */
    follow: z.boolean().default(true),
  })
  .strict();

export type FileStoreOptions = z.input<typeof fileStoreOptionsSchema>;
