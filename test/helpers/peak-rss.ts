/**
 * Run a script in a child Node process and read its peak resident set size, so memory bounds are measured on a
 * process of its own (the test runner's heap says nothing about one ingestion).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPORTER = fileURLToPath(new URL('./report-peak-rss.mjs', import.meta.url));
// The project's tsx, by path: the child may run in a folder with no node_modules of its own.
const TSX = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/loader.mjs')).href;

export interface MeasuredRun {
  code: number | null;
  stdout: string;
  /** stderr without the reporter's line. */
  stderr: string;
  /** The child's peak resident set size in bytes. */
  peakRssBytes: number;
}

/** Run `node --import tsx <script> …args` in `cwd` and measure its peak RSS. */
export function runMeasured(script: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<MeasuredRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, '--import', REPORTER, script, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => {
      const match = /\npeak-rss-kib (\d+)\n$/.exec(stderr);
      if (!match) return reject(new Error(`the child reported no peak RSS (exit ${code}): ${stderr.slice(-2000)}`));
      resolve({ code, stdout, stderr: stderr.slice(0, match.index), peakRssBytes: Number(match[1]) * 1024 });
    });
  });
}
