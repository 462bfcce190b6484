import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestPaths } from '../../src/ingest/index.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { runAxon } from '../helpers/cli.ts';
import { FakeEmbeddings } from './fakes.ts';

let root: string;
let store: MemoryStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-include-'));
  store = new MemoryStore();
  await mkdir(join(root, 'pkg/debian'), { recursive: true });
  await writeFile(join(root, 'pkg/README'), 'The package reads its settings from /etc/pkg.conf at start.');
  await writeFile(join(root, 'pkg/debian/README.Debian'), 'On Debian the service runs as the pkg user.');
  await writeFile(join(root, 'pkg/guide.md'), '# Guide\n\nRun pkg --help for the options.');
  await writeFile(join(root, 'pkg/LOGO'), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x00, 0x0d]));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const ingest = (paths: string[], options: Parameters<typeof ingestPaths>[2] = {}) =>
  ingestPaths(paths, { embeddings: new FakeEmbeddings(4, 2), store }, { baseDirectory: root, ...options });

describe('files without a known extension', () => {
  it('are read as text by a plain walk when they have no extension and their bytes are UTF-8; others are skipped', async () => {
    await writeFile(join(root, 'pkg/NOTICE'), new Uint8Array([0x63, 0x61, 0x66, 0xe9])); // Windows-1252, not UTF-8
    const summary = await ingest(['pkg']);
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['pkg/README', 'pkg/guide.md']);
    expect((await store.getBySource('file', 'pkg/README'))[0].content).toContain('/etc/pkg.conf');
    expect(summary.skipped).toEqual([
      {
        path: 'pkg/LOGO',
        code: 'binary',
        reason: expect.stringMatching(/^has no extension and contains NUL bytes, so it was not read as text \(supported: \.csv /),
      },
      {
        path: 'pkg/NOTICE',
        code: 'unsupported-extension',
        reason: expect.stringMatching(/^has no extension and is not valid UTF-8, so it was not read as text \(supported: /),
      },
      { path: 'pkg/debian/README.Debian', code: 'unsupported-extension', reason: expect.stringMatching(/^has an unsupported extension \.debian /) },
    ]);
  });

  it('are read as text when an include pattern asks for them; a binary one is still refused', async () => {
    const summary = await ingest(['pkg'], { include: ['README*', '*.md', 'LOGO'] });
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['pkg/README', 'pkg/debian/README.Debian', 'pkg/guide.md']);
    expect((await store.getBySource('file', 'pkg/README'))[0].content).toContain('/etc/pkg.conf');
    expect(summary.skipped).toEqual([
      {
        path: 'pkg/LOGO',
        code: 'unsupported-extension',
        reason: expect.stringMatching(/^has no extension and is not text \(contains NUL bytes\), so no loader applies/),
      },
    ]);
  });

  it('are read as text when named explicitly without an extension; an explicit binary one, or an unknown extension, still fails', async () => {
    await writeFile(join(root, 'pkg/picture.bmp'), 'BM');
    const summary = await ingest(['pkg/README', 'pkg/LOGO', 'pkg/picture.bmp']);
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['pkg/README']);
    expect(summary.failed.map((issue) => [issue.path, issue.code])).toEqual([
      ['pkg/LOGO', 'unsupported-extension'],
      ['pkg/picture.bmp', 'unsupported-extension'],
    ]);
  });

  it('a glob given as a path asks for what it matches', async () => {
    const summary = await ingest(['pkg/**/README*']);
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['pkg/README', 'pkg/debian/README.Debian']);
  });

  it('loaderPatterns choose a loader by glob, before the extension', async () => {
    await writeFile(join(root, 'pkg/NOTES.mdoc'), '# Notes\n\nThe pkg notes are written in Markdown.');
    const summary = await ingest(['pkg'], { loaderPatterns: { 'README*': 'txt', '*.mdoc': 'md' } });
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['pkg/NOTES.mdoc', 'pkg/README', 'pkg/debian/README.Debian', 'pkg/guide.md']);
    expect((await store.getBySource('file', 'pkg/NOTES.mdoc'))[0].metadata.headingPath).toEqual(['Notes']);
    await expect(ingest(['pkg'], { loaderPatterns: { 'README*': 'rst' } })).rejects.toThrow(
      /loaderPatterns\["README\*"\] names the loader "rst", which does not exist/,
    );
  });

  it('axon ingest --include, repeatable', async () => {
    const result = await runAxon(root, ['ingest', 'pkg', '--include', 'README*', '--include', '*.md', '--store', join(root, '.axon'), '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).ingested.map((file: { sourceName: string }) => file.sourceName)).toEqual([
      'pkg/README',
      'pkg/debian/README.Debian',
      'pkg/guide.md',
    ]);
  });
});

describe('axon ingest over files no loader handles', () => {
  it('reads extension-less text files (Debian copyright files) and names --include for the rest', async () => {
    for (const name of ['adduser', 'bash', 'coreutils']) {
      await mkdir(join(root, `corpus/${name}`), { recursive: true });
      await writeFile(
        join(root, `corpus/${name}/copyright`),
        `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: ${name}\n`,
      );
    }
    await writeFile(join(root, 'corpus/bash/notes.rst'), 'Notes\n=====\n');
    const result = await runAxon(root, ['ingest', 'corpus', '--store', join(root, '.axon')]);
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/ in \d+ ms:/, ' in N ms:')).toBe(
      [
        'Done in N ms: 3 ingested (3 chunks), 0 unchanged, 1 skipped, 0 failed.',
        "1 file was skipped for its extension; to read such files as plain text, name them with --include (repeatable), e.g. --include '*.rst'.",
      ].join('\n'),
    );
  });

  it('exits 1 when nothing at all was ingested, saying so with the --include hint', async () => {
    await mkdir(join(root, 'docs'), { recursive: true });
    await writeFile(join(root, 'docs/intro.rst'), 'Intro\n=====\n');
    await writeFile(join(root, 'docs/usage.rst'), 'Usage\n=====\n');
    await writeFile(join(root, 'docs/logo'), new Uint8Array([0x89, 0x50, 0x00]));
    const result = await runAxon(root, ['ingest', 'docs', '--store', join(root, '.axon')]);
    expect(result.code).toBe(1);
    expect(result.stdout.replace(/ in \d+ ms:/, ' in N ms:')).toBe(
      [
        'Done in N ms: 0 ingested (0 chunks), 0 unchanged, 3 skipped, 0 failed.',
        "Nothing was ingested: 2 files were skipped for their extension; to read such files as plain text, name them with --include (repeatable), e.g. --include '*.rst'.",
      ].join('\n'),
    );
    const json = await runAxon(root, ['ingest', 'docs', '--store', join(root, '.axon'), '--json']);
    expect(json.code).toBe(1);
    // Run again with the hint: the files are read, and the exit code is 0.
    const included = await runAxon(root, ['ingest', 'docs', '--store', join(root, '.axon'), '--include', '*.rst']);
    expect(included.code).toBe(0);
    expect(included.stdout).toMatch(/^Done in \d+ ms: 2 ingested \(2 chunks\), 0 unchanged, 0 skipped, 0 failed\.$/);
  });
});
