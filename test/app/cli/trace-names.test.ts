import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StageRecord } from '../../../src/pipeline/trace.ts';
import { runAxon } from '../../helpers/cli.ts';

// Where a person reads a trace, documents are named source#chunk; ids stay in the JSON beside the names.
let directory: string;
const axon = (...argv: string[]) => runAxon(directory, argv);
/** Every stored document's id, read from a run's JSON (`trace.sources` names each document a run saw). */
let documentIds: string[] = [];

/** Fails when a printout shows any document's id, or the 12-character prefix the CLI used to print. */
function expectNoDocumentIds(printed: string): void {
  expect(documentIds.length).toBeGreaterThan(3);
  for (const id of documentIds) expect(printed).not.toContain(id.slice(0, 12));
}

const HOURS = 'The office opens at 9 and closes at 5 on weekdays.\n';

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-trace-names-'));
  await mkdir(join(directory, 'notes'));
  await writeFile(join(directory, 'notes', 'hours.md'), HOURS);
  // The same text under another name: de-duplication drops one copy in favour of the other.
  await writeFile(join(directory, 'notes', 'hours-copy.md'), HOURS);
  await writeFile(join(directory, 'notes', 'kitchen.md'), 'The office kitchen is cleaned every Friday afternoon.\n');
  await writeFile(join(directory, 'notes', 'parking.md'), 'Parking at the office is free for visitors after 5.\n');
  await writeFile(join(directory, 'mmr.json'), JSON.stringify({ postProcessors: [{ type: 'mmr', k: 1 }] }));
  expect((await axon('ingest', 'notes')).code).toBe(0);
  documentIds = Object.keys(JSON.parse((await axon('ask', 'office', '--json')).stdout).trace.sources);
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

function runIdOf(stderr: string): string {
  return /run id ([0-9a-f-]{36})/.exec(stderr)![1];
}

describe('document names in traces', () => {
  it('axon trace <id> names documents as ask --trace does: scores, drops and the document a drop kept', async () => {
    const asked = await axon('ask', 'When does the office open?', '--trace');
    // The answer's own citations list each id beside its name; the trace below them names documents only.
    asked.stdout = asked.stdout.slice(asked.stdout.indexOf('\nTrace '));
    const trace = await axon('trace', runIdOf((await axon('ask', 'When does the office open?')).stderr));
    for (const printed of [asked.stdout, trace.stdout]) {
      expect(printed).toMatch(/ {7}top: notes\/hours(-copy)?\.md#0=0\.\d{4} {2}notes\/\w+\.md#0=/);
      expect(printed).toMatch(/ {7}dropped notes\/hours(-copy)?\.md#0: same content as another document \(kept: notes\/hours(-copy)?\.md#0\)\n/);
      expectNoDocumentIds(printed);
    }
    expect(trace.stdout).toMatch(/\n {2}citations: \[1\] notes\/hours(-copy)?\.md#0/);
  });

  it("MMR's drop names the selected document by source and chunk; the JSON keeps its id beside the reason", async () => {
    const asked = await axon('ask', 'When does the office open?', '--trace', '--config', 'mmr.json');
    expect(asked.stdout).toMatch(
      / {7}dropped notes\/\w+(-copy)?\.md#0: not among the 1 selected by MMR \(lambda 0\.5\): relevance -?\d\.\d{4}, MMR -?\d\.\d{4}, cosine -?\d\.\d{4} to the selected document most like it \(kept: notes\/hours(-copy)?\.md#0\)\n/,
    );
    expectNoDocumentIds(asked.stdout.slice(asked.stdout.indexOf('\nTrace ')));
    const json = JSON.parse((await axon('ask', 'When does the office open?', '--json', '--config', 'mmr.json')).stdout);
    const mmr = (json.trace.stages as StageRecord[]).find((stage) => stage.name === 'mmr')!;
    const [kept] = mmr.outputIds;
    expect(mmr.dropped.length).toBeGreaterThan(0);
    for (const dropped of mmr.dropped) {
      expect(dropped.keptId).toBe(kept);
      expect(dropped.reason).not.toContain(kept.slice(0, 8));
    }
    expect(json.trace.sources[kept]).toMatch(/^notes\/hours(-copy)?\.md#0$/);
  });

  it('axon trace --diff lists what only one run has, by name, and whether the shared ones moved', async () => {
    const first = runIdOf((await axon('ask', 'When does the office open?')).stderr);
    const second = runIdOf((await axon('ask', 'When does the office open?', '--config', 'mmr.json')).stderr);
    const diff = await axon('trace', '--diff', first.slice(0, 8), second.slice(0, 8));
    expect(diff.code).toBe(0);
    expectNoDocumentIds(diff.stdout);
    expect(diff.stdout).toMatch(/\n {2}packet\.evidence \(3 in a, 1 in b\)\n {4}only in a: notes\/\w+\.md#0, notes\/\w+\.md#0\n/);
    const json = JSON.parse((await axon('trace', '--diff', first.slice(0, 8), second.slice(0, 8), '--json')).stdout);
    const evidence = json.differences.find((difference: { path: string }) => difference.path === 'packet.evidence');
    expect(evidence.a).toHaveLength(3);
    for (const id of evidence.a) expect(json.sources[id]).toMatch(/^notes\/[\w-]+\.md#0$/);
  });
});
