import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-stress-');
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'file-store-follow-process.ts');
/**
 * How long the writer writes, and how many writes it makes at least (within four times as long); the readers run
 * until it is done. Bounded for a 2-core machine running the suite.
 */
const WRITER_SECONDS = 6;
const MIN_WRITES = 8;
const READERS = 2;

interface Summary {
  role: string;
  failures: string[];
  writes?: number;
  rounds?: number;
  generations?: number;
  markersSeen?: number;
}

function run(...args: string[]): Promise<Summary> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (errors += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = output.trim().split('\n').at(-1);
      if (code !== 0 || !line) return reject(new Error(`${args[0]} exited with ${code}: ${errors}`));
      resolve(JSON.parse(line) as Summary);
    });
  });
}

describe('FileStore under a writer and readers in separate processes', () => {
  it('readers see each write once it returned, in every mode, and never report a healthy store as damaged', async () => {
    const directory = await temporaryDirectory();
    const [writer, ...readers] = await Promise.all([
      run('writer', directory, String(WRITER_SECONDS), String(Date.now() % 1000), String(MIN_WRITES)),
      ...Array.from({ length: READERS }, () => run('reader', directory)),
    ]);
    expect(writer.failures).toEqual([]);
    expect(writer.writes).toBeGreaterThanOrEqual(MIN_WRITES);
    for (const reader of readers) {
      expect(reader.failures).toEqual([]);
      // It followed the writer: it saw several generations, and in its last round (after the writer was done) every marker.
      expect(reader.generations).toBeGreaterThan(2);
      expect(reader.markersSeen).toBe(writer.writes);
    }
  }, 120_000);
});
