import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';

/** What one chat call received. */
export interface ScriptedCall {
  /** 0-based position of the call. */
  index: number;
  messages: ChatMessage[];
  options: ChatOptions | undefined;
  /** Every message's content joined by blank lines: what a test usually asserts on. */
  prompt: string;
}

/** A reply: the text, an error to throw, or a function of the call (may be async, may throw). */
export type ScriptedReply = string | Error | ((call: ScriptedCall) => string | Promise<string>);

/**
 * A deterministic chat provider for tests. Replies come from a queue (one per call, in order; running out is an
 * error naming the call) or from one function called for every call. Every call is recorded. `stream` yields the
 * same reply in chunks of `chunkSize` characters. A signal that has fired rejects the call, as a real provider would.
 */
export class ScriptedChat implements ChatProvider {
  readonly name: string;
  readonly calls: ScriptedCall[] = [];
  private readonly queue: ScriptedReply[] | undefined;
  private readonly responder: ((call: ScriptedCall) => string | Promise<string>) | undefined;
  private readonly chunkSize: number;

  constructor(script: ScriptedReply[] | ((call: ScriptedCall) => string | Promise<string>), options: { name?: string; chunkSize?: number } = {}) {
    this.name = options.name ?? 'scripted-chat';
    this.chunkSize = options.chunkSize ?? 7;
    if (typeof script === 'function') this.responder = script;
    else this.queue = [...script];
  }

  /** The prompt of every call so far, in order. */
  get prompts(): string[] {
    return this.calls.map((call) => call.prompt);
  }

  /** Replies still queued (0 for a function script). */
  get remaining(): number {
    return this.queue?.length ?? 0;
  }

  async complete(messages: ChatMessage[], options?: ChatOptions): Promise<string> {
    options?.signal?.throwIfAborted();
    const call: ScriptedCall = {
      index: this.calls.length,
      messages: structuredClone(messages),
      options,
      prompt: messages.map((message) => message.content).join('\n\n'),
    };
    this.calls.push(call);
    let reply: ScriptedReply;
    if (this.responder) reply = this.responder;
    else {
      if (this.queue!.length === 0) throw new Error(`ScriptedChat: no reply scripted for call ${call.index + 1}.`);
      reply = this.queue!.shift()!;
    }
    if (reply instanceof Error) throw reply;
    const text = typeof reply === 'function' ? await reply(call) : reply;
    options?.signal?.throwIfAborted();
    return text;
  }

  async *stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<string> {
    const text = await this.complete(messages, options);
    for (let start = 0; start < text.length; start += this.chunkSize) {
      options?.signal?.throwIfAborted();
      yield text.slice(start, start + this.chunkSize);
    }
  }
}

/** The ids of `<document id="…">` blocks in a prompt, in the order shown: lets a scripted reply name real ids. */
export function documentIdsIn(prompt: string): string[] {
  return [...prompt.matchAll(/<document id="([^"…]+)">\n/g)].map((match) => match[1]);
}

/** The id shown for the document whose text contains `needle`. */
export function documentIdFor(prompt: string, needle: string): string {
  for (const match of prompt.matchAll(/<document id="([^"]+)">\n([\s\S]*?)\n<\/document>/g)) {
    if (match[2].includes(needle)) return match[1];
  }
  throw new Error(`No document containing ${JSON.stringify(needle)} in the prompt.`);
}
