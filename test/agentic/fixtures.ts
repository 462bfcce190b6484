import type { AgenticEvent, AgenticResult } from '../../src/agentic/index.ts';
import type { ChatMessage } from '../../src/contracts/chat.ts';
import type { DocumentInput } from '../../src/document.ts';
import { RAG, type SearchMode } from '../../src/rag.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import type { ScriptedCall } from '../helpers/scripted-chat.ts';

/** A pipeline over a real in-memory store with the offline embedder, searching in keyword mode by default. */
export class CorpusRAG extends RAG {
  readonly store: MemoryStore;
  constructor(
    private readonly mode: SearchMode = 'keyword',
    topK = 50,
  ) {
    super();
    this.store = new MemoryStore({ topK });
  }
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
  protected searchMode() {
    return this.mode;
  }
}

export async function corpusRag(documents: DocumentInput[], mode: SearchMode = 'keyword'): Promise<CorpusRAG> {
  const rag = new CorpusRAG(mode);
  await rag.addDocuments(documents);
  return rag;
}

/** A two-hop corpus: the film names the actress; only her own page names her government position. */
export const KISS_AND_TELL = 'What government position was held by the actress who played Corliss Archer in the film Kiss and Tell?';
export const twoHopCorpus: DocumentInput[] = [
  {
    id: 'film',
    content: 'Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.',
    sourceType: 'wiki',
    sourceName: 'Kiss and Tell (1945 film)',
    metadata: { title: 'Kiss and Tell (1945 film)' },
  },
  {
    id: 'temple',
    content: 'Shirley Temple Black was a child star who later served as Chief of Protocol of the United States and as ambassador to Ghana.',
    sourceType: 'wiki',
    sourceName: 'Shirley Temple',
    metadata: { title: 'Shirley Temple' },
  },
  {
    id: 'radio',
    content: 'Meet Corliss Archer was a radio program; the actress Janet Waldo played Corliss Archer on the radio.',
    sourceType: 'wiki',
    sourceName: 'Meet Corliss Archer',
    metadata: { title: 'Meet Corliss Archer' },
  },
  {
    id: 'waldo',
    content: 'Janet Waldo was an American radio actress who voiced Judy Jetson and played Corliss Archer.',
    sourceType: 'wiki',
    sourceName: 'Janet Waldo',
    metadata: { title: 'Janet Waldo' },
  },
  {
    id: 'sequel',
    content: 'A Kiss for Corliss is a 1949 film, the sequel to Kiss and Tell, with the actress playing Corliss Archer again.',
    sourceType: 'wiki',
    sourceName: 'A Kiss for Corliss',
    metadata: { title: 'A Kiss for Corliss' },
  },
  {
    id: 'tv',
    content: 'Meet Corliss Archer was also a television series; the actress Ann Baker played Corliss Archer in the film-like episodes.',
    sourceType: 'wiki',
    sourceName: 'Meet Corliss Archer (TV series)',
    metadata: { title: 'Meet Corliss Archer (TV series)' },
  },
  {
    id: 'protocol',
    content: 'The Chief of Protocol is a government position in the State Department that advises on diplomatic protocol.',
    sourceType: 'wiki',
    sourceName: 'Chief of Protocol',
    metadata: { title: 'Chief of Protocol' },
  },
];

/** Which of the retriever's prompts a call is. */
export function callKind(call: ScriptedCall): 'plan' | 'sufficiency' | 'answer' | 'repair' {
  const system = call.messages[0]?.content ?? '';
  const last = call.messages.at(-1) as ChatMessage;
  if (last.role === 'user' && last.content.startsWith('That reply could not be used')) return 'repair';
  if (system.startsWith('You plan searches')) return 'plan';
  if (system.startsWith('You check whether')) return 'sufficiency';
  return 'answer';
}

/** The label the prompt shows for the result containing `needle`. */
export function labelOf(prompt: string, needle: string): number {
  for (const match of prompt.matchAll(/<(?:result|evidence) label="(\d+)"[^>]*>\n([\s\S]*?)\n<\/(?:result|evidence)>/g)) {
    if (match[2].includes(needle)) return Number(match[1]);
  }
  throw new Error(`No result containing ${JSON.stringify(needle)} in the prompt.`);
}

export const json = (value: unknown) => JSON.stringify(value);

/** Every event of an agentic stream, and the result it ends with (a stream that ends otherwise fails the test). */
export async function collect(stream: AsyncIterable<AgenticEvent>): Promise<{ events: AgenticEvent[]; result: AgenticResult }> {
  const events: AgenticEvent[] = [];
  for await (const event of stream) events.push(event);
  const last = events.at(-1);
  if (last?.type !== 'result') throw new Error('the stream did not end with a result');
  return { events, result: last.result };
}
