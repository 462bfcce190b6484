import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { runAxon } from '../../helpers/cli.ts';
import { fileHashes, temporaryDirectories } from '../../stores/support.ts';

const temporaryDirectory = temporaryDirectories('axon-store-repair-');

/** A store in `<tmp>/store` with three segments and three live documents ("a" written twice). */
async function storeWithData(): Promise<{ cwd: string; directory: string }> {
  const cwd = await temporaryDirectory();
  const directory = join(cwd, 'store');
  const store = new FileStore({ directory, autoCompact: false });
  await store.add([doc('a', [1, 0]), doc('b', [0, 1])]);
  await store.add([doc('c', [1, 1])]);
  await store.add([doc('a', [1, 2])]);
  await store.close();
  return { cwd, directory };
}

describe('axon store repair <dir>', () => {
  it('rebuilds a missing manifest, says what it listed and skipped, and deletes nothing', async () => {
    const { cwd, directory } = await storeWithData();
    await rm(join(directory, 'manifest.json'));
    await writeFile(join(directory, 'segment-000009.axs'), 'AXONSEG1 cut short');
    const before = Object.keys(await fileHashes(directory));
    await expect(FileStore.open({ directory })).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining('axon store repair') });

    const result = await runAxon(cwd, ['store', 'repair', 'store']);
    // A file of which nothing could be read may have held documents: the repair says so and exits 1.
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${directory} has no manifest. Wrote a new manifest listing 3 segments with 3 live documents.`);
    expect(result.stdout).toContain('segments listed: segment-000001.axs, segment-000002.axs, segment-000003.axs');
    expect(result.stdout).toMatch(/skipped, nothing in them could be read .*: segment-000009\.axs/);
    expect(result.stdout).toContain('Files that could not be read may have held documents.');
    expect(result.stdout).toContain('Nothing was deleted.');
    expect(result.stdout).not.toContain('damaged manifest');

    const after = Object.keys(await fileHashes(directory));
    expect(after).toEqual(expect.arrayContaining(before));
    expect(after).toContain('manifest.json');
    const store = await FileStore.open({ directory });
    expect(await store.count()).toBe(3);
    await store.close();
  });

  it('keeps a damaged manifest beside the new one and says where', async () => {
    const { cwd, directory } = await storeWithData();
    const manifest = await readFile(join(directory, 'manifest.json'), 'utf8');
    await writeFile(join(directory, 'manifest.json'), manifest.replace('"segments"', '"segmentz"'));
    const result = await runAxon(cwd, ['store', 'repair', directory]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('has a manifest that fails its checks. Wrote a new manifest listing 3 segments with 3 live documents.');
    const kept = /the damaged manifest was kept as (\S+)/.exec(result.stdout)?.[1];
    expect(kept).toBeDefined();
    expect(kept!.startsWith(join(directory, 'manifest.json.corrupt-'))).toBe(true);
    expect(await readFile(kept!, 'utf8')).toContain('"segmentz"');
    expect(await new FileStore({ directory }).count()).toBe(3);
  });

  it('--dry-run reports what a repair would do and writes nothing', async () => {
    const { cwd, directory } = await storeWithData();
    const manifest = await readFile(join(directory, 'manifest.json'), 'utf8');
    await writeFile(join(directory, 'manifest.json'), manifest.replace('"segments"', '"segmentz"'));
    const before = await fileHashes(directory);

    const result = await runAxon(cwd, ['store', 'repair', 'store', '--dry-run']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('A repair would write a new manifest listing 3 segments with 3 live documents; nothing was written (--dry-run).');
    expect(result.stdout).toContain('segments it would list: segment-000001.axs, segment-000002.axs, segment-000003.axs');
    expect(result.stdout).toContain('would be kept beside the new one');
    expect(await fileHashes(directory)).toEqual(before);
    await expect(new FileStore({ directory }).count()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });

    const json = await runAxon(cwd, ['store', 'repair', 'store', '--dry-run', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      directory,
      recovered: false,
      state: 'damaged',
      dryRun: true,
      segments: ['segment-000001.axs', 'segment-000002.axs', 'segment-000003.axs'],
      skipped: [],
      salvaged: [],
      damaged: [],
      lost: 0,
      notes: [],
      documents: 3,
    });
    expect(await fileHashes(directory)).toEqual(before);

    // The dry run's report is what the repair then does.
    const repaired = await runAxon(cwd, ['store', 'repair', 'store', '--json']);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ recovered: true, state: 'damaged', segments: JSON.parse(json.stdout).segments, documents: 3 });
  });

  it('a segment of 400 with one damaged document: keeps the 399 others, lists the damaged one by id and source, exits 1', async () => {
    const cwd = await temporaryDirectory();
    const directory = join(cwd, 'store');
    const store = new FileStore({ directory, autoCompact: false });
    await store.add(
      Array.from({ length: 400 }, (_, index) =>
        doc(`chunk-${index}`, [1, index + 1], { sourceType: 'file', sourceName: `guide-${index % 8}.md`, content: `text ${index}` }),
      ),
    );
    await store.close();
    const [segment] = (await store.manifest()).segments;
    const bytes = await readFile(join(directory, segment.file));
    bytes[bytes.indexOf('"text 123"') + 3] ^= 0x01;
    await writeFile(join(directory, segment.file), bytes);
    await rm(join(directory, 'manifest.json'));

    const dry = await runAxon(cwd, ['store', 'repair', 'store', '--dry-run']);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain(`${segment.file} is damaged: would keep 399 of 400 live documents in a new segment; 1 damaged`);
    const result = await runAxon(cwd, ['store', 'repair', 'store']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${directory} has no manifest. Wrote a new manifest listing 1 segment with 399 live documents.`);
    expect(result.stdout).toMatch(new RegExp(`  ${segment.file} is damaged: kept 399 of 400 live documents in segment-\\d+\\.axs; 1 damaged`));
    expect(result.stdout).toContain(`  damaged: "chunk-123" (file:guide-3.md) in ${segment.file}: its content does not match its checksum`);
    expect(result.stdout).toContain('1 live document could not be kept: ingest their sources again to restore them.');
    const json = JSON.parse((await runAxon(cwd, ['store', 'repair', 'store', '--json'])).stdout);
    expect(json).toMatchObject({ state: 'intact', recovered: false, lost: 0, documents: 399 });
    expect(await new FileStore({ directory }).count()).toBe(399);
  });

  it('leaves an intact store as it is, and says so', async () => {
    const { cwd, directory } = await storeWithData();
    const before = await fileHashes(directory);
    const result = await runAxon(cwd, ['store', 'repair', 'store']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`The manifest of ${directory} is intact (3 segments, 3 live documents): nothing to repair, nothing was changed.`);
    expect(await fileHashes(directory)).toEqual(before);
  });

  it('a folder with no store files: nothing to repair', async () => {
    const cwd = await temporaryDirectory();
    await mkdir(join(cwd, 'notes'));
    const result = await runAxon(cwd, ['store', 'repair', 'notes']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('holds no store files (no manifest, no segments): nothing to repair.');
    expect(await readdir(join(cwd, 'notes'))).toEqual([]);
  });

  it('a failure is the typed error on one line, exit code 1', async () => {
    const { cwd, directory } = await storeWithData();
    await rm(join(directory, 'manifest.json'));
    // A segment name that is a folder: reading it fails, which is an I/O problem, not a segment to skip.
    await mkdir(join(directory, 'segment-000007.axs'));
    const result = await runAxon(cwd, ['store', 'repair', 'store']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^axon: \[file-store\] Could not read or write the store in .*store: EISDIR/);
    expect(result.stdout).toBe('');
    await expect(FileStore.recover({ directory })).rejects.toMatchObject({ code: 'STORE_IO', component: 'file-store' });
    expect((await runAxon(cwd, ['store', 'repair', 'store', '--dry-run', '--json'])).code).toBe(1);
    expect(await readdir(directory)).not.toContain('manifest.json');
  });

  it('usage mistakes exit 2 with the fix', async () => {
    const cwd = await temporaryDirectory();
    expect(await runAxon(cwd, ['store'])).toMatchObject({ code: 2, stderr: expect.stringContaining('axon store repair <dir>') });
    expect(await runAxon(cwd, ['store', 'fix', 'x'])).toMatchObject({ code: 2, stderr: expect.stringContaining('got "fix"') });
    expect(await runAxon(cwd, ['store', 'repair'])).toMatchObject({ code: 2, stderr: expect.stringContaining("needs the store's folder") });
    expect(await runAxon(cwd, ['store', 'repair', 'a', 'b'])).toMatchObject({ code: 2, stderr: expect.stringContaining('takes one folder') });
    expect(await runAxon(cwd, ['store', 'repair', 'missing'])).toMatchObject({ code: 2, stderr: expect.stringContaining('is not a folder') });
  });

  it('--store names the folder when no positional does', async () => {
    const { cwd, directory } = await storeWithData();
    await rm(join(directory, 'manifest.json'));
    const result = await runAxon(cwd, ['store', 'repair', '--store', 'store']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Wrote a new manifest listing 3 segments');
  });
});
