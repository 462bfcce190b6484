import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { runAxon } from '../../helpers/cli.ts';
import { fileHashes, temporaryDirectories } from '../../stores/support.ts';

const temporaryDirectory = temporaryDirectories('axon-store-verify-');

/** A store in `<tmp>/store`: two segments, a keyword snapshot written by close(). */
async function storeWithData(): Promise<{ cwd: string; directory: string }> {
  const cwd = await temporaryDirectory();
  const directory = join(cwd, 'store');
  const store = new FileStore({ directory, autoCompact: false });
  await store.add([doc('a', [1, 0], { content: 'alpha apples' }), doc('b', [0, 1], { content: 'bravo bananas' })]);
  await store.add([doc('c', [1, 1], { content: 'charlie cherries' })]);
  await store.close();
  return { cwd, directory };
}

describe('axon store verify <dir>', () => {
  it('checks every listed file whole and exits 0 when all match', async () => {
    const { cwd } = await storeWithData();
    const result = await runAxon(cwd, ['store', 'verify', 'store']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Checked 3 files \(0\.0 MiB, generation \d+, 3 live documents\) of .*store: every file matches the manifest\.$/);
    const json = JSON.parse((await runAxon(cwd, ['store', 'verify', '--store', 'store', '--json'])).stdout);
    expect(json).toMatchObject({ ok: true, documents: 3 });
    expect(json.files.map((file: { kind: string }) => file.kind).sort()).toEqual(['keyword', 'segment', 'segment']);
  });

  it('finds a damaged document that a load does not read, names the file, exits 1 and changes nothing', async () => {
    const { cwd, directory } = await storeWithData();
    const manifest = await (await FileStore.open({ directory })).manifest();
    const segment = manifest.segments[0].file;
    const bytes = await readFile(join(directory, segment));
    bytes[bytes.length - 2] ^= 0x01; // inside the last document's content, past the segment's head
    await writeFile(join(directory, segment), bytes);
    // A load checks the head only, so the store opens; the check reads the whole file.
    expect(await (await FileStore.open({ directory })).count()).toBe(3);
    const before = await fileHashes(directory);
    const result = await runAxon(cwd, ['store', 'verify', 'store']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('3 files');
    expect(result.stdout).toContain(`  ${segment} (segment): its checksum does not match the manifest`);
    // Which document: by id and source, and what a repair would do.
    expect(result.stdout).toContain(`    damaged: "b" (test:suite) in ${segment}: its content does not match its checksum`);
    expect(result.stdout).toContain('axon store repair');
    expect(result.stdout).toContain('restore the folder from a backup');
    expect(await fileHashes(directory)).toEqual(before);
    const report = await FileStore.verify({ directory });
    expect(report.ok).toBe(false);
    expect(report.files.filter((file) => file.problem !== undefined).map((file) => file.file)).toEqual([segment]);
    expect(report.files.find((file) => file.file === segment)?.damagedDocuments?.map((document) => document.id)).toEqual(['b']);
  });

  it('reports a damaged keyword snapshot as rebuildable, and a missing or truncated file', async () => {
    const { cwd, directory } = await storeWithData();
    const manifest = await (await FileStore.open({ directory })).manifest();
    const keyword = (manifest.components.keyword as { file: string }).file;
    const bytes = await readFile(join(directory, keyword));
    bytes[4] ^= 0x01; // the format version, inside the head
    await writeFile(join(directory, keyword), bytes);
    const result = await runAxon(cwd, ['store', 'verify', 'store']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`  ${keyword} (keyword): its checksum does not match the manifest`);
    expect(result.stdout).toContain('rebuilds them from its documents');
    await writeFile(join(directory, manifest.segments[1].file), Buffer.alloc(10));
    const report = await FileStore.verify({ directory });
    expect(report.files.find((file) => file.file === manifest.segments[1].file)?.problem).toMatch(/holds 10 bytes, the manifest recorded \d+/);
  });

  it('an empty folder has nothing to check; a damaged manifest is STORE_CORRUPT pointing at repair', async () => {
    const cwd = await temporaryDirectory();
    const empty = join(cwd, 'empty');
    await mkdir(empty);
    expect(await runAxon(cwd, ['store', 'verify', 'empty'])).toMatchObject({ code: 0, stdout: expect.stringContaining('nothing to check') });
    const { cwd: other, directory } = await storeWithData();
    await writeFile(join(directory, 'manifest.json'), '{"format":');
    const result = await runAxon(other, ['store', 'verify', 'store']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/STORE_CORRUPT|is corrupt/);
    expect(result.stderr).toContain('axon store repair');
  });
});
