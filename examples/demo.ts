// The demo behind `npm run demo`: ingest this repository's docs/ into a fresh embedded store and answer a
// few questions from them, offline (local hashing embedder, file store, extractive answers).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedRAG } from '../app/config/embedded-rag.ts';
import { formatAnswer, formatTrace } from '../app/cli/format.ts';
import { ingestPaths } from '../src/ingest/index.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const directory = await mkdtemp(join(tmpdir(), 'axon-demo-'));
const questions = [
  'Why does the adaptive threshold refuse a negative multiplier?',
  'How do I write a custom post-processor?',
  'What happens to the file store if the process crashes during a write?',
];

try {
  // A temporary store: no embedding cache, which would sit beside it in the system's temporary folder and outlive it.
  const rag = new EmbeddedRAG({ directory, embeddingCache: false });
  const summary = await ingestPaths([join(root, 'docs')], rag.components(), { baseDirectory: root });
  console.log(`Ingested ${summary.filesIngested} files from docs/ as ${summary.chunksAdded} chunks into ${directory} (${summary.ms} ms).\n`);
  for (const [index, question] of questions.entries()) {
    const answer = await rag.answer(question);
    console.log(`Q: ${question}\n`);
    console.log(formatAnswer(answer));
    if (index === 0) console.log(`\n${formatTrace(answer.trace)}`);
    console.log(`\n${'─'.repeat(80)}\n`);
  }
  console.log('Try your own: npx axon ingest docs/ && npx axon ask "How are scores traced?" --trace');
} finally {
  await rm(directory, { recursive: true, force: true });
}
