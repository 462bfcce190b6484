import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Document, JsonValue } from '../../src/document.ts';
import { ingestPaths } from '../../src/ingest/index.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { FakeEmbeddings } from './fakes.ts';

let root: string;
let store: MemoryStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-eligibility-ingest-'));
  store = new MemoryStore();
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function write(relativePath: string, content: string): Promise<void> {
  await mkdir(join(root, relativePath, '..'), { recursive: true });
  await writeFile(join(root, relativePath), content);
}

async function stored(sourceName: string): Promise<Document[]> {
  return store.getBySource('file', sourceName);
}

const ingest = (options: Parameters<typeof ingestPaths>[2] = {}) =>
  ingestPaths(['docs'], { embeddings: new FakeEmbeddings(4, 2), store }, { baseDirectory: root, ...options });

describe('eligibility fields at ingestion', () => {
  it('keeps the eligibility fields of JSON Lines records, arrays and objects included', async () => {
    const line = {
      text: 'Refunds take 14 days.',
      tenantId: 'acme',
      allowedRoles: ['support', 'finance'],
      redaction: 'pii',
      trustLevel: 'trusted',
      updatedAt: '2026-01-05',
      maxAgeDays: 365,
      supersedes: ['refund-2024'],
      facts: { 'refund.days': 14 },
      tags: ['ignored'],
    };
    await write('docs/policy.jsonl', `${JSON.stringify(line)}\n`);
    await ingest();
    const [document] = await stored('docs/policy.jsonl');
    expect(document.metadata).toMatchObject({
      tenantId: 'acme',
      allowedRoles: ['support', 'finance'],
      redaction: 'pii',
      trustLevel: 'trusted',
      updatedAt: '2026-01-05',
      maxAgeDays: 365,
      supersedes: ['refund-2024'],
      facts: { 'refund.days': 14 },
    });
    // Other arrays keep the old default: left out unless metadataFields names them.
    expect(document.metadata.tags).toBeUndefined();
  });

  it('keeps them from Markdown front matter', async () => {
    await write(
      'docs/guide.md',
      '---\ntenantId: acme\nallowedRoles: [support]\nmaxAgeDays: 90\nupdatedAt: "2026-03-01"\n---\n# Guide\n\nRefunds take 14 days.\n',
    );
    await ingest();
    const [document] = await stored('docs/guide.md');
    expect(document.metadata).toMatchObject({ tenantId: 'acme', allowedRoles: ['support'], maxAgeDays: 90, updatedAt: '2026-03-01' });
  });

  it('applies per-folder defaults where the file sets nothing itself, and re-ingests when the defaults change', async () => {
    await write('docs/acme/a.txt', 'Acme refunds take 14 days.');
    await write('docs/acme/b.jsonl', `${JSON.stringify({ text: 'Shared note.', tenantId: 'globex' })}\n`);
    await write('docs/public/c.txt', 'Opening hours are nine to five.');
    const defaults: { match: string; metadata: Record<string, JsonValue> }[] = [
      { match: 'docs/**', metadata: { trustLevel: 'internal' } },
      { match: 'docs/acme/**', metadata: { tenantId: 'acme', allowedRoles: ['support'] } },
    ];
    await ingest({ metadataDefaults: defaults });
    expect((await stored('docs/acme/a.txt'))[0].metadata).toMatchObject({ tenantId: 'acme', allowedRoles: ['support'], trustLevel: 'internal' });
    expect((await stored('docs/acme/b.jsonl'))[0].metadata).toMatchObject({ tenantId: 'globex', allowedRoles: ['support'] });
    const publicMetadata = (await stored('docs/public/c.txt'))[0].metadata;
    expect(publicMetadata.trustLevel).toBe('internal');
    expect(publicMetadata.tenantId).toBeUndefined();

    const again = await ingest({ metadataDefaults: defaults });
    expect(again.filesUnchanged).toBe(3);
    const changed = await ingest({ metadataDefaults: [defaults[0], { match: 'docs/acme/**', metadata: { tenantId: 'initech' } }] });
    expect(changed.filesUnchanged).toBe(1);
    expect((await stored('docs/acme/a.txt'))[0].metadata.tenantId).toBe('initech');
  });

  it('rejects malformed defaults as a configuration error', async () => {
    await write('docs/a.txt', 'text');
    await expect(ingest({ metadataDefaults: [{ match: '', metadata: {} }] })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
