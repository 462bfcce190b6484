/** Helpers shared by the store suites. */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { AxonError } from '../../src/errors.ts';

/** A small deterministic generator of values in [-0.5, 0.5), so failures reproduce. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
}

/**
 * A `temporaryDirectory()` for a test file: each call makes a new folder named `<prefix>…` under the
 * system's temporary folder, and every folder made is removed after each test.
 */
/** Every file of a folder with a hash of its bytes, by name: what "nothing changed" means for a store. */
export async function fileHashes(directory: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  for (const name of (await readdir(directory)).sort())
    entries[name] = createHash('sha256')
      .update(await readFile(join(directory, name)))
      .digest('hex');
  return entries;
}

export function temporaryDirectories(prefix: string): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    // Retried: a store a test left open may still be finishing a background snapshot in the folder (ENOTEMPTY).
    for (const directory of made.splice(0)) await rm(directory, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
  return async () => {
    const directory = await mkdtemp(join(tmpdir(), prefix));
    made.push(directory);
    return directory;
  };
}

/** Run `action` and check that it throws an `AxonError` with `code` (and, when given, a message matching `pattern`). */
export function expectAxonError(action: () => unknown, code: string, pattern?: RegExp): void {
  try {
    action();
  } catch (error) {
    expect(AxonError.isInstance(error)).toBe(true);
    expect((error as AxonError).code).toBe(code);
    if (pattern) expect((error as Error).message).toMatch(pattern);
    return;
  }
  throw new Error(`expected an AxonError ${code}`);
}

/** Run the FileStore crash writer (fixtures/) with these store options until it acknowledged `batches` batches, SIGKILL it `delayMs` later, return the acknowledged batches. */
export async function runCrashWriter(
  directory: string,
  prefix: string,
  batches: number,
  delayMs: number,
  options: Record<string, unknown> = {},
): Promise<number[]> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'file-store-crash-writer.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, directory, prefix, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acknowledged: number[] = [];
  let errors = '';
  let buffered = '';
  let killScheduled = false;
  child.stderr.on('data', (chunk) => (errors += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) acknowledged.push(Number(line.replace('ack ', '')));
      if (acknowledged.length >= batches && !killScheduled) {
        killScheduled = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`crash writer exited with ${code}: ${errors}`))));
  });
  return acknowledged;
}
