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

export function writeRandomUnitVector(target: Float32Array, next: () => number): void {
  let sumOfSquares = 0;
  for (let index = 0; index < target.length; index++) {
    target[index] = next();
    sumOfSquares += target[index] * target[index];
  }
  const inverse = 1 / Math.sqrt(sumOfSquares);
  for (let index = 0; index < target.length; index++) target[index] *= inverse;
}

/**
 * A writer of structured unit vectors: a point z of a 32-dimensional latent space (each coordinate a sum of
 * three uniforms, near Gaussian), mapped by one fixed random matrix, plus noise of a tenth of its length.
 */
export function latentWriter(dimensions: number, next: () => number): (target: Float32Array) => void {
  const LATENT = 32;
  const map = Float32Array.from({ length: dimensions * LATENT }, next);
  const point = new Float64Array(LATENT);
  return (target) => {
    for (let index = 0; index < LATENT; index++) point[index] = next() + next() + next();
    let sumOfSquares = 0;
    for (let row = 0; row < dimensions; row++) {
      let value = 0;
      for (let index = 0; index < LATENT; index++) value += map[row * LATENT + index] * point[index];
      target[row] = value;
      sumOfSquares += value * value;
    }
    // Uniform noise in [-0.5, 0.5) has variance 1/12: scaled so its expected length is a tenth of the point's.
    const noise = 0.1 * Math.sqrt(sumOfSquares) * Math.sqrt(12 / dimensions);
    for (let row = 0; row < dimensions; row++) target[row] += noise * next();
    normalise(target);
  };
}

function normalise(target: Float32Array): void {
  let sumOfSquares = 0;
  for (let index = 0; index < target.length; index++) sumOfSquares += target[index] * target[index];
  const inverse = 1 / Math.sqrt(sumOfSquares);
  for (let index = 0; index < target.length; index++) target[index] *= inverse;
}

/** xorshift32 in [-0.5, 0.5): fast and reproducible. */
export function randomGenerator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32 - 0.5;
  };
}

/** A random unit vector as a plain array, from a generator of values in [0, 1) (such as mulberry32): components uniform in [-1, 1), normalised. */
export function randomUnitArray(dimensions: number, next: () => number): number[] {
  const vector = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}
