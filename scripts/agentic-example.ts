/**
 * Generate the event streams shown in docs/agentic.md: a two-hop question over a small encyclopedia, answered
 * by the agentic retriever with the offline planner (no model at all), then with a scripted chat model (fixed
 * replies, so the page shows the shape of a model-planned run without an account).
 *
 *   npx tsx scripts/agentic-example.ts            # rewrites the generated blocks of docs/agentic.md
 *   npx tsx scripts/agentic-example.ts --print    # prints them instead
 *
 * Timings (`atMs`, `ms`) are whatever this machine measured; long strings are cut at 140 characters.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AgenticRetriever, type AgenticEvent } from '../src/agentic/index.ts';
import type { ChatMessage, ChatProvider } from '../src/contracts/chat.ts';
import { RAG, type DocumentInput } from '../src/index.ts';
import { LocalHashEmbeddings } from '../providers/index.ts';
import { MemoryStore } from '../stores/index.ts';

const PAGE = fileURLToPath(new URL('../docs/agentic.md', import.meta.url));
const QUESTION = 'What government position was held by the actress who played Corliss Archer in the film Kiss and Tell?';

const ENCYCLOPEDIA: DocumentInput[] = [
  ['Kiss and Tell (1945 film)', 'Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.'],
  ['Shirley Temple', 'Shirley Temple Black was an American child star who later served as Chief of Protocol of the United States and as ambassador to Ghana.'],
  ['Meet Corliss Archer', 'Meet Corliss Archer was a radio program; the actress Janet Waldo played Corliss Archer on the radio.'],
  ['Janet Waldo', 'Janet Waldo was an American radio actress who voiced Judy Jetson and played Corliss Archer.'],
  ['A Kiss for Corliss', 'A Kiss for Corliss is a 1949 film, the sequel to Kiss and Tell, with the actress playing Corliss Archer again.'],
  ['Meet Corliss Archer (TV series)', 'Meet Corliss Archer was also a television series; the actress Ann Baker played Corliss Archer.'],
  ['Chief of Protocol', 'The Chief of Protocol is a government position in the State Department that advises on diplomatic protocol.'],
  ["Arthur's Magazine", "Arthur's Magazine was an American literary periodical first published in Philadelphia in 1844."],
].map(([title, content], index) => ({ id: `wiki-${index}`, content, sourceType: 'wiki', sourceName: title, metadata: { title, chunkIndex: 0 } }));

class Encyclopedia extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
}

/** Fixed replies in the formats the retriever asks for: plan the bridge, judge, answer with markers. */
class ScriptedModel implements ChatProvider {
  readonly name = 'scripted-model';
  private plans = 0;
  async complete(messages: ChatMessage[]): Promise<string> {
    const system = messages[0].content;
    const prompt = messages.map((message) => message.content).join('\n');
    if (system.startsWith('You plan searches')) {
      return ++this.plans === 1
        ? JSON.stringify({ subQueries: [{ query: 'actress who played Corliss Archer in Kiss and Tell', retriever: 'wiki' }] })
        : JSON.stringify({ subQueries: [{ query: 'Shirley Temple government position', retriever: 'wiki', follows: resultLabel(prompt, '17-year-old') }] });
    }
    if (system.startsWith('You check whether')) {
      return prompt.includes('Chief of Protocol of the United States')
        ? JSON.stringify({ sufficient: true, missing: '' })
        : JSON.stringify({ sufficient: false, missing: 'which government position Shirley Temple held' });
    }
    const label = (needle: string) => [...prompt.matchAll(/<evidence label="(\d+)"[^>]*>\n([^\n]*)/g)].find((match) => match[2].includes(needle))?.[1];
    return `Shirley Temple played Corliss Archer in Kiss and Tell [${label('17-year-old')}]. She later served as Chief of Protocol of the United States [${label('Chief of Protocol of the United States')}].`;
  }
  async *stream(messages: ChatMessage[]): AsyncIterable<string> {
    const text = await this.complete(messages);
    for (let start = 0; start < text.length; start += 24) yield text.slice(start, start + 24);
  }
}

/** The label of the result (in a planning prompt) whose text holds `needle`: the result a second hop follows from. */
function resultLabel(prompt: string, needle: string): number | undefined {
  const match = [...prompt.matchAll(/<result label="(\d+)"[^>]*>\n([^\n]*)/g)].find((block) => block[2].includes(needle));
  return match === undefined ? undefined : Number(match[1]);
}

async function render(chat: ChatProvider | undefined): Promise<string> {
  const rag = new Encyclopedia();
  await rag.addDocuments(ENCYCLOPEDIA);
  const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag, maxResults: 3 }], chat, maxResults: 5 });
  const lines: string[] = [];
  let result = '';
  for await (const event of agent.stream(QUESTION, { runId: chat ? 'example-model' : 'example-offline' })) {
    if (event.type === 'result')
      result = formatResult(
        shorten({ ...event.result, results: event.result.results.map(({ metadata: _metadata, ...rest }) => rest) }) as Record<string, unknown>,
      );
    else lines.push(JSON.stringify(shorten(event as AgenticEvent)));
  }
  return `Events, one per line:\n\n\`\`\`json\n${lines.join('\n')}\n\`\`\`\n\nThe final \`result\` event (each result's metadata left out here):\n\n\`\`\`json\n${result}\n\`\`\``;
}

/** Top-level fields one per line; each result, citation and failure on a line of its own. */
function formatResult(result: Record<string, unknown>): string {
  const fields = Object.entries(result).map(([key, value]) => {
    if (Array.isArray(value) && value.length > 0) return `  ${JSON.stringify(key)}: [\n${value.map((item) => `    ${JSON.stringify(item)}`).join(',\n')}\n  ]`;
    return `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`;
  });
  return `{\n${fields.join(',\n')}\n}`;
}

function shorten(value: unknown): unknown {
  if (typeof value === 'string') return value.length > 140 ? `${value.slice(0, 139)}…` : value;
  if (Array.isArray(value)) return value.map(shorten);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shorten(item)]));
  return value;
}

function replaceBlock(page: string, name: string, content: string): string {
  const start = `<!-- generated:${name} -->`;
  const end = `<!-- /generated:${name} -->`;
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`docs/agentic.md has no ${start} … ${end} block.`);
  return `${page.slice(0, from + start.length)}\n${content}\n${page.slice(to)}`;
}

const offline = await render(undefined);
const model = await render(new ScriptedModel());
if (process.argv.includes('--print')) {
  console.log(offline);
  console.log(model);
} else {
  let page = await readFile(PAGE, 'utf8');
  page = replaceBlock(page, 'offline', offline);
  page = replaceBlock(page, 'model', model);
  await writeFile(PAGE, page);
  console.log(`Rewrote the generated blocks of ${PAGE}.`);
}
