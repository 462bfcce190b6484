import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { agenticCitations as agenticSources } from '../../../src/agentic/conversation-turn.ts';
import { formatAgenticEvent } from '../agentic-format.ts';
import type { AgenticResult, AgenticTraceEvent } from '../../../src/agentic/types.ts';
import { formatCitation } from '../../../src/context/evidence.ts';
import { JsonlTraceStore } from '../../../src/context/trace-store.ts';
import type { Citation } from '../../../src/document.ts';
import type { ConversationAnswer } from '../../../src/rag.ts';
import { agenticTurn, documentsAgent } from '../../serve/agentic-turn.ts';
import { commandHistory, conversationIdOption, newConversationId } from '../conversation-support.ts';
import { formatTrace } from '../format.ts';
import { loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';
import { agenticSearch, parseAskOptions } from './ask.ts';

const HELP = [
  'Ask a question and press Enter; a follow-up is read with the questions and answers before it.',
  '  /sources  the sources of the last answer',
  '  /trace    the stages of the last answer',
  '  /new      start a new conversation',
  '  /help     this list',
  'Ctrl-C cancels an answer that is being written (the turn is not recorded); Ctrl-D leaves.',
].join('\n');

/** What the last answer left for `/sources` and `/trace`. */
type LastAnswer = { kind: 'pipeline'; answer: ConversationAnswer } | { kind: 'agentic'; result: AgenticResult; steps: AgenticTraceEvent[] };

/**
 * `axon chat`: an interactive conversation over the stored documents. Each line is a question, answered with the
 * turns before it (a follow-up is searched rewritten to stand alone), the answer streamed as it is written, the
 * turn recorded in the store folder (`--conversation <id>` continues an earlier conversation). `/sources`, `/trace`,
 * `/new`; Ctrl-C cancels the answer being written and the prompt comes back; Ctrl-D (the end of the input) leaves,
 * after the questions already typed are answered.
 */
export async function runChat(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (positionals.length > 0) throw new UsageError('chat takes no question on the command line: type each at the prompt (axon chat, or axon ask "…").');
  if (options.json) throw new UsageError('chat is interactive and has no --json; axon ask --conversation <id> --json answers one question as JSON.');
  const continued = conversationIdOption(options.conversation);
  // Each question is asked as `axon ask` would be, with the same search options and caller.
  const asked = parseAskOptions(options);
  const pipeline = await loadPipeline(options, io);
  const { rag, dataDirectory, configHash } = pipeline;
  const history = commandHistory(pipeline);
  const traceStore = new JsonlTraceStore(dataDirectory);
  const input = io.input ?? process.stdin;
  const write = io.write ?? ((text: string) => void process.stdout.write(text));
  const terminal = input.isTTY === true;
  // One agent for the whole session: it keeps nothing between runs.
  const agent = options.agentic ? documentsAgent(rag, { filter: asked.filter, search: agenticSearch(asked), caller: asked.caller }) : undefined;
  let conversation = rag.conversation({ id: continued ?? newConversationId(), history });
  const earlier = continued === undefined ? 0 : (await conversation.turns()).length;
  io.err(
    earlier > 0
      ? `Continuing conversation ${conversation.id} (${earlier} turn${earlier === 1 ? '' : 's'}). /help lists the commands; Ctrl-D leaves.`
      : `Conversation ${conversation.id}. /help lists the commands; Ctrl-D leaves.`,
  );

  // On a terminal, readline echoes what is typed and draws the prompt where the answers are written.
  const echo = terminal ? (io.write ? writableOf(io.write) : process.stdout) : undefined;
  const lines = createInterface({ input, output: echo, terminal, prompt: 'you> ' });
  const queue: string[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  let running: AbortController | undefined;
  let last: LastAnswer | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  lines.on('line', (line) => {
    queue.push(line);
    notify();
  });
  lines.on('close', () => {
    closed = true;
    notify();
  });
  // Ctrl-C: cancel the answer being written; at the prompt, say how to leave. (Without a terminal, the signal.)
  const interrupt = () => {
    if (running) running.abort();
    else if (terminal) {
      write('^C (Ctrl-D leaves)\n');
      lines.prompt();
    } else lines.close();
  };
  lines.on('SIGINT', interrupt);
  if (!terminal) process.on('SIGINT', interrupt);

  const ask = async (question: string) => {
    const controller = new AbortController();
    running = controller;
    let streamed = false;
    try {
      if (agent) {
        const steps: AgenticTraceEvent[] = [];
        const run = { traceStore, pipelineVersion: { configHash }, signal: controller.signal };
        for await (const event of agenticTurn(agent, question, { history, id: conversation.id }, run)) {
          if (event.type === 'trace' && event.status !== 'inProgress') {
            steps.push(event);
            if (event.step === 'condense') searchedAs(write, question, event.output?.searchedQuestion);
          } else if (event.type === 'response') {
            write(event.text);
            streamed = true;
          } else if (event.type === 'result') {
            last = { kind: 'agentic', result: event.result, steps };
            if (!streamed) write(event.result.answer ?? `[${event.result.status}]`);
            write('\n');
            sourcesLine(write, agenticSources(event.result));
          }
        }
        return;
      }
      for await (const event of conversation.stream(question, { ...asked, signal: controller.signal, traceStore, pipelineVersion: { configHash } })) {
        if (event.type === 'stage' && event.record.stage === 'condense') searchedAs(write, question, event.record.detail?.output);
        else if (event.type === 'delta') {
          write(event.text);
          streamed = true;
        } else if (event.type === 'result') {
          last = { kind: 'pipeline', answer: event.answer };
          if (!streamed) write(event.answer.status === 'answered' ? event.answer.text : `[${event.answer.status}] ${event.answer.text}`);
          write('\n');
          sourcesLine(write, event.answer.citations);
        }
      }
    } catch (error) {
      if (controller.signal.aborted) write(`${streamed ? '\n' : ''}(cancelled: this turn was not recorded)\n`);
      else write(`${streamed ? '\n' : ''}axon: ${(error instanceof Error ? error.message : String(error)).replace(/^\[axon\] /, '')}\n`);
    } finally {
      running = undefined;
    }
  };

  const command = async (text: string) => {
    const name = text.split(/\s+/)[0].toLowerCase();
    if (name === '/help' || name === '/?') write(`${HELP}\n`);
    else if (name === '/sources') {
      if (last === undefined) write('No answer yet.\n');
      else {
        const citations = last.kind === 'pipeline' ? last.answer.citations : agenticSources(last.result);
        write(
          citations.length === 0
            ? 'The last answer cites nothing.\n'
            : `${citations.map((citation) => `  [${citation.label}] ${formatCitation(citation)}  (${citation.id})`).join('\n')}\n`,
        );
      }
    } else if (name === '/trace') {
      if (last === undefined) write('No answer yet.\n');
      else write(`${last.kind === 'pipeline' ? formatTrace(last.answer.trace) : last.steps.map(formatAgenticEvent).join('\n')}\n`);
    } else if (name === '/new') {
      conversation = rag.conversation({ id: newConversationId(), history });
      last = undefined;
      write(`New conversation ${conversation.id}.\n`);
    } else if (name === '/quit' || name === '/exit') lines.close();
    else write(`Unknown command ${name}: /sources, /trace, /new, /help (Ctrl-D leaves).\n`);
  };

  try {
    lines.prompt();
    for (;;) {
      while (queue.length === 0 && !closed) await new Promise<void>((resolve) => (wake = resolve));
      const line = queue.shift();
      if (line === undefined) break;
      const text = line.trim();
      if (text.startsWith('/')) await command(text);
      else if (text !== '') await ask(text);
      if (!closed) lines.prompt();
    }
    if (terminal) write('\n');
  } finally {
    if (!terminal) process.off('SIGINT', interrupt);
    lines.close();
    await rag.close();
    await history.close?.();
  }
  return 0;
}

// --- Internal helpers ---

/** A stream that hands what it is given to `write`. */
function writableOf(write: (text: string) => void): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      write(String(chunk));
      done();
    },
  });
}

/** `(searched as: "…")` before the answer, when the follow-up was rewritten. */
function searchedAs(write: (text: string) => void, question: string, searched: unknown): void {
  if (typeof searched === 'string' && searched !== question) write(`(searched as: ${JSON.stringify(searched)})\n`);
}

/** One line naming the sources an answer cites. */
function sourcesLine(write: (text: string) => void, citations: Citation[]): void {
  if (citations.length > 0) write(`Sources: ${citations.map((citation) => `[${citation.label}] ${formatCitation(citation)}`).join('  ')}\n`);
}
