/**
 * Settings shared by the property tests (fast-check): a capped number of runs so the whole set stays a few
 * seconds of `npm test`, and the seed printed on failure (fast-check's report carries it, with the path to
 * replay: `fc.assert(property, { seed, path })`). `AXON_PROPERTY_RUNS` scales every property's runs for a
 * longer local search; `AXON_PROPERTY_SEED` replays a seed.
 */
import type { Parameters } from 'fast-check';

export function propertyRuns(numRuns: number): Parameters<unknown> {
  const scale = Number(process.env.AXON_PROPERTY_RUNS_SCALE ?? '1');
  const seed = process.env.AXON_PROPERTY_SEED === undefined ? undefined : Number(process.env.AXON_PROPERTY_SEED);
  return { numRuns: Math.max(1, Math.round(numRuns * (Number.isFinite(scale) && scale > 0 ? scale : 1))), ...(seed === undefined ? {} : { seed }), verbose: 1 };
}
