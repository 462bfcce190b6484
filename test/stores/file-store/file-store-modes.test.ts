/**
 * Private by default: a store's folder is created 0700 and its files 0600 (they hold the documents' text), unless
 * the store is given another `fileMode`; `traces.jsonl` (questions, answers, evidence) likewise.
 */
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlTraceStore } from '../../../src/context/trace-store.ts';
import { acquireWriteLock } from '../../../stores/file-store/file-store-format.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-modes-');

/** The permission bits a file created with `mode` gets under this process's umask. */
function created(mode: number): number {
  return mode & ~process.umask();
}

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

async function modesIn(directory: string): Promise<Record<string, number>> {
  const modes: Record<string, number> = {};
  for (const name of await readdir(directory)) modes[name] = await modeOf(join(directory, name));
  return modes;
}

describe('FileStore file modes', () => {
  it('creates its folder 0700 and every file 0600 by default: segments, manifest, snapshots, merged segments, the lock, a repaired manifest', async () => {
    const root = await temporaryDirectory();
    const directory = join(root, 'nested', 'store');
    const store = new FileStore({ directory, ann: { minDocuments: 0, m: 8 } });
    for (let batch = 0; batch < 4; batch++) await store.add([doc(`d${batch}`, [1, batch + 1], { content: `text ${batch}` })]);
    await store.compact();
    await store.close();
    expect(await modeOf(directory)).toBe(created(0o700));
    const modes = await modesIn(directory);
    expect(Object.keys(modes)).toEqual(
      expect.arrayContaining([
        'manifest.json',
        expect.stringMatching(/^segment-/),
        expect.stringMatching(/^keyword-index-/),
        expect.stringMatching(/^ann-index-/),
      ]),
    );
    for (const [name, mode] of Object.entries(modes)) expect({ name, mode }).toEqual({ name, mode: created(0o600) });
    // The lock, held while a write runs.
    const release = await acquireWriteLock(directory, 0, 'test');
    expect(await modeOf(join(directory, 'write.lock'))).toBe(created(0o600));
    await release();
    // A repair keeps the damaged manifest as a copy of its own, private too, whatever the original's mode.
    await chmod(join(directory, 'manifest.json'), 0o644);
    await writeFile(join(directory, 'manifest.json'), '{"format":');
    const report = await FileStore.recover({ directory });
    expect(await modeOf(report.previousManifest!)).toBe(created(0o600));
    expect(await modeOf(join(directory, 'manifest.json'))).toBe(created(0o600));
  });

  it('takes another fileMode, as a number or an octal string, for files and the folder it creates', async () => {
    for (const [fileMode, file, folder] of [
      [0o640, 0o640, 0o750],
      ['644', 0o644, 0o755],
      ['0660', 0o660, 0o770],
    ] as const) {
      const directory = join(await temporaryDirectory(), 'store');
      const store = new FileStore({ directory, fileMode });
      await store.add([doc('a', [1, 0])]);
      await store.close();
      expect(await modeOf(directory)).toBe(created(folder));
      for (const mode of Object.values(await modesIn(directory))) expect(mode).toBe(created(file));
    }
  });

  it('leaves the mode of a folder that exists alone', async () => {
    const directory = join(await temporaryDirectory(), 'store');
    await mkdir(directory, { mode: 0o755 });
    await chmod(directory, 0o755);
    await new FileStore({ directory }).add([doc('a', [1, 0])]);
    expect(await modeOf(directory)).toBe(0o755);
    expect(await modeOf(join(directory, 'manifest.json'))).toBe(created(0o600));
  });

  it('refuses a mode the owner could not read and write through, or that is not a mode', () => {
    for (const fileMode of [0o400, 0o200, 0o1777, -1, 1.5, '999', 'rw-------', '0x1ff'] as const) {
      expect(() => new FileStore({ directory: '/tmp/unused', fileMode: fileMode as number })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
  });
});

describe('JsonlTraceStore file modes', () => {
  it('creates traces.jsonl 0600 (and its folder 0700) unless told otherwise', async () => {
    const directory = join(await temporaryDirectory(), 'data');
    const traces = new JsonlTraceStore(directory);
    await traces.save({ runId: 'r1' } as never);
    expect(await modeOf(directory)).toBe(created(0o700));
    expect(await modeOf(traces.file)).toBe(created(0o600));
    expect(await readFile(traces.file, 'utf8')).toContain('"r1"');

    const shared = new JsonlTraceStore(join(await temporaryDirectory(), 'shared'), { fileMode: 0o644 });
    await shared.save({ runId: 'r2' } as never);
    expect(await modeOf(shared.file)).toBe(created(0o644));
    expect(await modeOf(join(shared.file, '..'))).toBe(created(0o755));
    expect(() => new JsonlTraceStore(directory, { fileMode: 0o400 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
