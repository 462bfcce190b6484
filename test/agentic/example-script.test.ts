import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('scripts/agentic-example.ts', () => {
  it('prints a real event stream and result for the two-hop question, with both planners', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/agentic-example.ts', '--print'], { cwd: process.cwd(), timeout: 60_000 });
    const events = stdout
      .split('\n')
      .filter((line) => line.startsWith('{"type":'))
      .map((line) => JSON.parse(line) as { type: string; step?: string; status?: string; input?: { planner?: string } });
    expect(events.filter((event) => event.step === 'planning' && event.input?.planner === 'offline').length).toBeGreaterThan(0);
    expect(events.filter((event) => event.step === 'planning' && event.input?.planner === 'model').length).toBeGreaterThan(0);
    expect(stdout).toContain('"runId": "example-offline"');
    expect(stdout).toContain('"runId": "example-model"');
    expect(stdout).toContain('"answer": "Shirley Temple played Corliss Archer in Kiss and Tell. She later served as Chief of Protocol of the United States."');
  }, 60_000);

  it('has written its output into docs/agentic.md', async () => {
    const page = await readFile('docs/agentic.md', 'utf8');
    for (const name of ['offline', 'model']) {
      const block = page.slice(page.indexOf(`<!-- generated:${name} -->`), page.indexOf(`<!-- /generated:${name} -->`));
      expect(block, name).toContain('"type":"trace"');
      expect(block, name).toContain('"stopReason": "sufficient"');
    }
  });
});
