/**
 * Prints a real three-turn conversation, for docs/conversations.md, over a small corpus in a temporary folder (the
 * embedded default, offline): first in the library (`rag.conversation(...).ask` three times on an `EmbeddedRAG`),
 * then on the command line (`axon ask --conversation` three times, then `axon conversations`).
 * Run: `npx tsx scripts/conversation-session.ts`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../app/cli/main.ts';
import { EmbeddedRAG } from '../app/config/embedded-rag.ts';
import { MemoryChatHistory } from '../src/conversation/memory-chat-history.ts';

const NOTES: Record<string, string> = {
  'survey.md':
    '# The Orvik survey\n\nThe 2019 survey of the Orvik glacier was led by Dr. Hanne Lund of the Norwegian Polar Institute. ' +
    'The team measured the thickness of the ice at twelve stakes along the glacier.\n',
  'lund.md': '# Hanne Lund\n\nHanne Lund retired in 2021, after thirty years at the Norwegian Polar Institute. She now teaches glaciology in Tromsø.\n',
  'glacier.md': '# The Orvik glacier\n\nThe Orvik glacier lost four metres of thickness between 2010 and 2019.\n',
  'harbour.md': '# The harbour\n\nMette Dahl, the harbour pilot, retired when she turned sixty.\n',
};

const QUESTIONS = ['Who led the 2019 survey of the Orvik glacier?', 'When did she retire?', 'Where does she teach now?'];

async function axon(cwd: string, argv: string[]): Promise<string> {
  const out: string[] = [];
  const code = await main(argv, { out: (text) => out.push(text), err: () => {}, errorStream: process.stderr, cwd });
  if (code !== 0) throw new Error(`axon ${argv.join(' ')} exited with ${code}`);
  return out.join('\n');
}

const directory = await mkdtemp(join(tmpdir(), 'axon-conversation-session-'));
try {
  await mkdir(join(directory, 'notes'));
  for (const [name, text] of Object.entries(NOTES)) await writeFile(join(directory, 'notes', name), text);
  await axon(directory, ['ingest', 'notes']);

  console.log('// the library: the store axon ingest just wrote');
  const rag = new EmbeddedRAG({ directory: join(directory, '.axon'), embeddingCache: false });
  try {
    const conversation = rag.conversation({ id: 'orvik-library', history: new MemoryChatHistory() });
    for (const question of QUESTIONS) {
      const answer = await conversation.ask(question);
      console.log(`await conversation.ask(${JSON.stringify(question)});`);
      console.log(`// searchedQuestion: ${JSON.stringify(answer.searchedQuestion)}, status: ${answer.status}`);
      console.log(`// cites: ${answer.citations.map((citation) => `[${citation.label}] ${citation.sourceName}`).join(', ')}`);
    }
  } finally {
    await rag.close();
  }
  console.log('');

  for (const question of QUESTIONS) {
    console.log(`$ axon ask ${JSON.stringify(question)} --conversation orvik`);
    console.log(await axon(directory, ['ask', question, '--conversation', 'orvik']));
    console.log('');
  }
  console.log('$ axon conversations');
  console.log((await axon(directory, ['conversations'])).replace(/\d{4}-\d\d-\d\d \d\d:\d\d/, 'YYYY-MM-DD hh:mm'));
} finally {
  await rm(directory, { recursive: true, force: true });
}
