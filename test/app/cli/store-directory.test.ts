import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runAxon } from '../../helpers/cli.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-store-directory-'));
  await mkdir(join(directory, 'notes'));
  await writeFile(join(directory, 'notes', 'billing.md'), '# Billing\n\nInvoices are issued on the first day of each month.\n');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(directory, { recursive: true, force: true });
});

describe("the file store's folder from a config file", () => {
  it('"directory" is where ingest writes and ask reads', async () => {
    await writeFile(join(directory, 'axon.config.json'), JSON.stringify({ store: { type: 'file', directory: 'data' } }));
    expect((await runAxon(directory, ['ingest', 'notes'])).code).toBe(0);
    expect(existsSync(join(directory, 'data'))).toBe(true);
    const ask = await runAxon(directory, ['ask', 'When are invoices issued?']);
    expect(ask.code).toBe(0);
    expect(existsSync(join(directory, 'data', 'traces.jsonl'))).toBe(true);
  });

  it('the deprecated "path" still works, and --store overrides either name', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    await writeFile(join(directory, 'axon.config.json'), JSON.stringify({ store: { type: 'file', path: 'old' } }));
    expect((await runAxon(directory, ['ingest', 'notes'])).code).toBe(0);
    expect(existsSync(join(directory, 'old'))).toBe(true);
    const overridden = await runAxon(directory, ['ingest', 'notes', '--store', 'elsewhere']);
    expect(overridden.stderr).not.toContain('give only "directory"');
    expect(overridden.code).toBe(0);
    expect(existsSync(join(directory, 'elsewhere'))).toBe(true);
  });
});
