import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runServe } from '../../../app/cli/commands/serve.ts';
import type { CommandIO } from '../../../app/cli/io.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { runAxon } from '../../helpers/cli.ts';
import { parseEvents } from '../serve/fixture.ts';
import { temporaryDirectories } from '../../stores/support.ts';

const temporaryDirectory = temporaryDirectories('axon-serve-follow-');

const run = promisify(execFile);
const MAIN = resolve('app/cli/main.ts');
const TSX = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/loader.mjs')).href;
const MODES = ['vector', 'keyword', 'hybrid'] as const;

/** `axon ingest` in a process of its own, as from another shell. */
async function ingestElsewhere(directory: string, file: string): Promise<void> {
  await run(process.execPath, ['--import', TSX, MAIN, 'ingest', file, '--store', 'data'], { cwd: directory, timeout: 60_000 });
}

/** A note of `paragraphs` paragraphs about `topic`, each a chunk of its own. */
function note(topic: string, paragraphs: number): string {
  return Array.from(
    { length: paragraphs },
    (_, index) => `The ${topic} policy, part ${index + 1}: every ${topic} request is reviewed by the ${topic} desk within ${index + 2} days.`,
  ).join('\n\n');
}

/** How many documents the store holds, as a process that opens it now sees it. */
async function stored(directory: string): Promise<number> {
  const store = await FileStore.open({ directory: join(directory, 'data') });
  try {
    return await store.count();
  } finally {
    await store.close();
  }
}

interface Asked {
  sources: string[];
  documents: number | undefined;
}

/** Start `axon serve` on the store in `directory/data`; returns how to ask it and how to stop it. */
async function startServe(directory: string, workers: string) {
  let announce: (url: string) => void = () => {};
  const announced = new Promise<string>((resolve) => (announce = resolve));
  const io: CommandIO = {
    out: (text) => announce(/http:\/\/\S+/.exec(text)?.[0] ?? ''),
    err: () => undefined,
    errorStream: process.stderr,
    cwd: directory,
  };
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const exit = runServe([], { store: 'data', port: '0', workers }, io, stopped);
  const url = new URL(await announced);
  const token = url.searchParams.get('token')!;
  const ask = async (question: string, searchMode: (typeof MODES)[number]): Promise<Asked> => {
    const response = await fetch(`${url.origin}/api/ask?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question, searchMode }),
    });
    const events = parseEvents(await response.text());
    const result = events.find((event) => event.event === 'result');
    if (result === undefined) throw new Error(`no result: ${JSON.stringify(events.at(-1))}`);
    const chunks = (result.data as { chunks: Record<string, { sourceName: string }> }).chunks;
    const store = events.find((event) => event.event === 'store')?.data as { documents: number } | undefined;
    return { sources: Object.values(chunks).map((chunk) => chunk.sourceName), documents: store?.documents };
  };
  return {
    ask,
    stop: async () => {
      stop();
      expect(await exit).toBe(0);
    },
  };
}

describe('axon serve follows the store', () => {
  it('answers from what axon ingest stored in another process, in every search mode, also after newer snapshots and a merge replaced the files it loaded', async () => {
    const directory = await temporaryDirectory();
    await mkdir(join(directory, 'notes'));
    await writeFile(join(directory, 'notes', 'account.txt'), note('password', 3));
    expect((await runAxon(directory, ['ingest', 'notes/account.txt', '--store', 'data'])).code).toBe(0);
    const first = JSON.parse(await readFile(join(directory, 'data', 'manifest.json'), 'utf8')) as {
      segments: { file: string }[];
      components: Record<string, { file: string }>;
    };
    const server = await startServe(directory, '1');
    try {
      for (const mode of MODES) expect((await server.ask('What does the zebra policy say?', mode)).sources).not.toContain('notes/zebra.txt');

      await writeFile(join(directory, 'notes', 'zebra.txt'), note('zebra', 3));
      await ingestElsewhere(directory, 'notes/zebra.txt');
      for (const mode of MODES) {
        const asked = await server.ask('What does the zebra policy say?', mode);
        expect(asked.sources, mode).toContain('notes/zebra.txt');
        expect(asked.documents).toBe(await stored(directory));
      }

      // More ingests: newer keyword snapshots, and merges that remove the segments the server loaded.
      for (const topic of ['refund', 'invoice', 'shipping']) {
        await writeFile(join(directory, 'notes', `${topic}.txt`), note(topic, 4));
        await ingestElsewhere(directory, `notes/${topic}.txt`);
      }
      const files = await readdir(join(directory, 'data'));
      expect(files).not.toContain(first.segments[0].file);
      expect(files).not.toContain(first.components.keyword.file);
      for (const mode of MODES) {
        const shipping = await server.ask('How long does the shipping desk take?', mode);
        expect(shipping.sources, mode).toContain('notes/shipping.txt');
        expect(shipping.documents).toBe(await stored(directory));
        expect((await server.ask('What does the zebra policy say?', mode)).sources, mode).toContain('notes/zebra.txt');
        expect((await server.ask('How do I reset my password?', mode)).sources, mode).toContain('notes/account.txt');
      }
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('answering in the server’s own thread (--workers 0) follows the store too', async () => {
    const directory = await temporaryDirectory();
    await mkdir(join(directory, 'notes'));
    await writeFile(join(directory, 'notes', 'account.txt'), note('password', 2));
    expect((await runAxon(directory, ['ingest', 'notes/account.txt', '--store', 'data'])).code).toBe(0);
    const server = await startServe(directory, '0');
    try {
      const before = (await server.ask('What does the zebra policy say?', 'hybrid')).documents;
      expect(before).toBe(await stored(directory));
      await writeFile(join(directory, 'notes', 'zebra.txt'), note('zebra', 2));
      await ingestElsewhere(directory, 'notes/zebra.txt');
      for (const mode of MODES) {
        const asked = await server.ask('What does the zebra policy say?', mode);
        expect(asked.sources, mode).toContain('notes/zebra.txt');
        expect(asked.documents).toBe(await stored(directory));
        expect(asked.documents).toBeGreaterThan(before!);
      }
    } finally {
      await server.stop();
    }
  }, 120_000);
});
