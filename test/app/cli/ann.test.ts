import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredAgenticTrace } from '../../../src/context/trace-store.ts';
import { main } from '../../../app/cli/main.ts';
import type { StageRecord } from '../../../src/pipeline/trace.ts';
import { runAxon } from '../../helpers/cli.ts';

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-cli-ann-'));
  await mkdir(join(directory, 'notes'));
  await writeFile(
    join(directory, 'notes', 'billing.md'),
    '# Billing\n\nInvoices are issued on the first day of each month.\n\nRefunds for duplicate charges take five business days.\n',
  );
  await writeFile(join(directory, 'notes', 'account.txt'), 'To reset your password, open Settings and choose Security.\n');
  // The graph is used from the first document, so these few notes go through it.
  await writeFile(join(directory, 'axon.config.json'), JSON.stringify({ store: { type: 'file', directory: '.axon', ann: { minDocuments: 0, m: 8 } } }));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** The method and ef the vector search stage of an `ask --json` recorded. */
async function vectorSearch(...flags: string[]): Promise<{ method?: string; ef?: number; found: string[] }> {
  const result = await runAxon(directory, ['ask', 'How long do refunds take?', '--json', '--mode', 'vector', ...flags]);
  expect(result.code, result.stderr).toBe(0);
  const stage = JSON.parse(result.stdout).trace.stages.find((record: { stage: string }) => record.stage === 'search');
  return { method: stage.detail.method, ef: stage.detail.ef, found: stage.outputIds };
}

describe('axon with a store that keeps an ANN index', () => {
  it('builds the graph on ingest, answers through it, and says so in the trace', async () => {
    expect((await runAxon(directory, ['ingest', 'notes'])).code).toBe(0);
    // Ingest closes the pipeline, which saves the graph up to date: the next ask links nothing again.
    const manifest = JSON.parse(await readFile(join(directory, '.axon', 'manifest.json'), 'utf8'));
    expect(manifest.components.ann.covers).toEqual(manifest.segments.map((segment: { file: string }) => segment.file));
    const annSearch = await vectorSearch('--ef', '64');
    expect(annSearch).toMatchObject({ method: 'ann', ef: 64 });
    const exactSearch = await vectorSearch('--exact');
    expect(exactSearch.method).toBe('exact');
    // Three chunks: the graph finds them all, in the exact order.
    expect(annSearch.found).toEqual(exactSearch.found);
  });

  it('gives --ef and --exact to every search of an agentic ask, as the saved run shows', async () => {
    const methods = async (...flags: string[]) => {
      const result = await runAxon(directory, ['ask', '--agentic', 'How long do refunds take?', '--mode', 'vector', ...flags]);
      expect(result.code, result.stderr).toBe(0);
      const stored = JSON.parse((await runAxon(directory, ['trace', '--last', '--json'])).stdout) as StoredAgenticTrace;
      const pipeline = (stored.steps.find((step) => step.step === 'speculativeRetrieval')!.output!.searches as { pipeline: { stages: StageRecord[] } }[])[0]
        .pipeline;
      const search = pipeline.stages.find((stage) => stage.stage === 'search')!;
      return { method: search.detail?.method, ef: search.detail?.ef };
    };
    expect(await methods('--ef', '64')).toEqual({ method: 'ann', ef: 64 });
    expect(await methods('--exact')).toEqual({ method: 'exact', ef: undefined });
  });

  it('gives --ef and --exact to every question of axon chat, as axon ask does, with --agentic too', async () => {
    /** The search stage of the last run, when `chat` with `flags` answered one question. */
    const chatSearch = async (...flags: string[]) => {
      const input = Object.assign(new PassThrough(), { isTTY: false });
      const written: string[] = [];
      const running = main(['chat', '--mode', 'vector', ...flags], {
        out: (text) => written.push(`${text}\n`),
        err: () => {},
        errorStream: Object.assign(new PassThrough(), { isTTY: false }),
        cwd: directory,
        input,
        write: (text) => written.push(text),
      });
      input.end('How long do refunds take?\n');
      expect(await running).toBe(0);
      expect(written.join('')).toMatch(/Sources:/);
      const stored = JSON.parse((await runAxon(directory, ['trace', '--last', '--json'])).stdout);
      const stages: StageRecord[] =
        'steps' in stored
          ? (
              (stored as StoredAgenticTrace).steps.find((step) => step.step === 'speculativeRetrieval')!.output!.searches as {
                pipeline: { stages: StageRecord[] };
              }[]
            )[0].pipeline.stages
          : stored.stages;
      const search = stages.find((stage) => stage.stage === 'search')!;
      return { method: search.detail?.method, ef: search.detail?.ef };
    };
    expect(await chatSearch('--ef', '64')).toEqual({ method: 'ann', ef: 64 });
    expect(await chatSearch('--exact')).toEqual({ method: 'exact', ef: undefined });
    expect(await chatSearch('--agentic', '--ef', '48')).toEqual({ method: 'ann', ef: 48 });
    expect(await chatSearch('--agentic', '--exact')).toEqual({ method: 'exact', ef: undefined });
  });

  it('rejects a bad --ef as a usage error', async () => {
    const result = await runAxon(directory, ['ask', 'x', '--ef', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--ef takes a positive whole number, got "0"');
  });
});
