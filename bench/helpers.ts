/** What the benchmarks share: where the project and its evaluation data are, and how time is measured. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (the folder above bench/). */
export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A path under ../shared/eval (relative to the project root), where the BEIR datasets live. */
export function sharedEvalPath(...segments: string[]): string {
  return resolve(projectRoot, '../shared/eval', ...segments);
}

/** The median; for an even count, the mean of the two middle values. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Start a clock; calling what it returns gives the wall-clock time and this process's CPU time (user +
 * system) since, in ms. CPU time is steadier on a shared machine, where wall time also counts waiting for a core.
 */
export function startClock(): () => { wallMs: number; cpuMs: number } {
  const wallStarted = performance.now();
  const cpuStarted = process.cpuUsage();
  return () => {
    const cpu = process.cpuUsage(cpuStarted);
    return { wallMs: performance.now() - wallStarted, cpuMs: (cpu.user + cpu.system) / 1000 };
  };
}
