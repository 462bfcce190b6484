// For each entry point, import it in a fresh Node process and list the packages that got loaded: the core must
// not load a provider SDK, a store client or the container; SDKs load on first use, not on import.
import { spawnSync } from 'node:child_process';

/** Loaded on first use by the adapter that needs it, never by importing an entry. */
const HEAVY = ['openai', '@qdrant/js-client-rest', 'pg', 'inversify', 'htmlparser2', 'yaml', 'unpdf', '@opentelemetry/api', 'ai'];
/** What an entry may load of HEAVY because it exists for it: `axon-rag/ai-sdk` is the one entry that loads `ai` (which imports @opentelemetry/api). */
const EXPECTED = { 'axon-rag/ai-sdk': ['ai', '@opentelemetry/api'] };
const ENTRIES = ['axon-rag', 'axon-rag/ingest', 'axon-rag/stores', 'axon-rag/processors', 'axon-rag/providers', 'axon-rag/config', 'axon-rag/ai-sdk'];
let failed = false;
for (const entry of ENTRIES) {
  const run = spawnSync(process.execPath, ['--import', './record-packages.mjs', '--input-type=module', '-e', `await import('${entry}')`], { encoding: 'utf8' });
  if (run.status !== 0) {
    console.log(`${entry}: exited ${run.status}\n${run.stderr}`);
    failed = true;
    continue;
  }
  const packages = [...new Set(run.stdout.split('\n').filter(Boolean))].sort();
  // The core loads no package at all (zod included: its schemas load with the first run that needs them).
  const unexpected =
    entry === 'axon-rag'
      ? packages.filter((name) => name !== 'axon-rag')
      : packages.filter((name) => HEAVY.includes(name) && !(EXPECTED[entry] ?? []).includes(name));
  console.log(`${entry}: ${packages.join(', ')}${unexpected.length ? `  <- unexpected: ${unexpected.join(', ')}` : ''}`);
  if (unexpected.length) failed = true;
}
process.exit(failed ? 1 : 0);
