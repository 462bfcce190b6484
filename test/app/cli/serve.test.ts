import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runServe } from '../../../app/cli/commands/serve.ts';
import type { CommandIO } from '../../../app/cli/io.ts';
import { runAxon } from '../../helpers/cli.ts';
import { parseEvents } from '../serve/fixture.ts';
import { temporaryDirectories } from '../../stores/support.ts';

const temporaryDirectory = temporaryDirectories('axon-serve-cli-');

describe('axon serve', () => {
  it('serves the ingested store, saves runs where axon trace reads them, and stops cleanly', async () => {
    const directory = await temporaryDirectory();
    await mkdir(join(directory, 'notes'));
    await writeFile(join(directory, 'notes', 'account.txt'), 'To reset your password, open Settings and choose Security.\n');
    expect((await runAxon(directory, ['ingest', 'notes', '--store', 'data'])).code).toBe(0);
    let announce: (url: string) => void = () => {};
    const announced = new Promise<string>((resolve) => (announce = resolve));
    const errors: string[] = [];
    const io: CommandIO = {
      out: (text) => announce(/http:\/\/\S+/.exec(text)?.[0] ?? ''),
      err: (text) => errors.push(text),
      errorStream: process.stderr,
      cwd: directory,
    };
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const exit = runServe([], { store: 'data', port: '0' }, io, stopped);
    const url = new URL(await announced);
    expect(url.hostname).toBe('127.0.0.1');
    const token = url.searchParams.get('token')!;
    const response = await fetch(`${url.origin}/api/ask?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'How do I reset my password?' }),
    });
    const result = parseEvents(await response.text()).at(-1)!;
    expect(result.event).toBe('result');
    expect((result.data as { answer: string }).answer).toContain('Settings');
    stop();
    expect(await exit).toBe(0);
    expect(errors.join('\n')).toContain('Stopped.');
    await expect(fetch(url.origin)).rejects.toThrow();
    const traces = await readFile(join(directory, 'data', 'traces.jsonl'), 'utf8');
    expect(traces).toContain('How do I reset my password?');
    const trace = await runAxon(directory, ['trace', '--last', '--store', 'data']);
    expect(trace.stdout).toContain('How do I reset my password?');
  });

  it('refuses a non-loopback host without --allow-remote, and a bad port', async () => {
    const directory = await temporaryDirectory();
    const remote = await runAxon(directory, ['serve', '--host', '0.0.0.0']);
    expect(remote.code).not.toBe(0);
    expect(remote.stderr).toMatch(/not a loopback address[\s\S]*allow-remote/);
    const port = await runAxon(directory, ['serve', '--port', '70000']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port');
  });
});
