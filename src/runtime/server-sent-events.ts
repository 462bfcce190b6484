/**
 * A reader of `text/event-stream` bodies (the WHATWG server-sent events format) for adapters that stream over
 * plain `fetch`. It yields raw events; what their `data` means is the adapter's business.
 */
import { invalidResponseError } from './http-errors.ts';

/** One dispatched event: its `event:` type (when the server named one) and its `data:` lines joined by `\n`. */
export interface ServerSentEvent {
  event?: string;
  data: string;
}

/** The most characters one event (or one line) may hold; a server past it is refused, not buffered without end. */
export const MAX_EVENT_CHARACTERS = 16 * 1024 * 1024;

/**
 * The events of a stream body, in order. Lines end in `\n`, `\r\n` or `\r`; `:` lines are comments; an event is
 * dispatched at a blank line, and one without data is skipped; an event cut off by the end of the body is dropped,
 * as the format says, so a truncated stream reads as one that lacks its last event. `id:` and `retry:` are read
 * and ignored (nothing here reconnects).
 *
 * @throws ProviderError `PROVIDER_RESPONSE_INVALID` (naming `provider`) when one event or line passes
 * `MAX_EVENT_CHARACTERS`; read errors of the body (a lost connection, an abort) are passed on as they are.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array> | null, provider: string): AsyncGenerator<ServerSentEvent> {
  if (body === null) return;
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new EventParser(provider);
  let done = false;
  try {
    while (true) {
      const chunk = await reader.read();
      if (chunk.done) break;
      yield* parser.push(decoder.decode(chunk.value, { stream: true }));
    }
    // A trailing event without its closing blank line is dropped: nothing is dispatched at the end.
    yield* parser.push(decoder.decode());
    done = true;
  } finally {
    // Left early (or failed): stop the body so the connection is not kept reading.
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * One streamed event's data as a JSON object (what every provider's stream sends), else the reply is no stream of
 * that provider: `PROVIDER_RESPONSE_INVALID`, saying the event (`what`: "event", "chunk") was not.
 */
export function parseEventObject(data: string, provider: string, what = 'event'): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw invalidResponseError(provider, 200, `a streamed ${what} is not valid JSON.`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidResponseError(provider, 200, `a streamed ${what} is not an object.`);
  return parsed as Record<string, unknown>;
}

// --- Internal helpers ---

class EventParser {
  readonly #provider: string;
  #pending = '';
  /** The previous chunk ended in `\r`: a `\n` at the start of the next one belongs to that line end. */
  #afterCarriageReturn = false;
  #data: string[] = [];
  #dataCharacters = 0;
  #event: string | undefined;

  constructor(provider: string) {
    this.#provider = provider;
  }

  *push(text: string): Generator<ServerSentEvent> {
    let start = 0;
    if (this.#afterCarriageReturn && text.startsWith('\n')) start = 1;
    this.#afterCarriageReturn = false;
    for (let index = start; index < text.length; index++) {
      const character = text.charCodeAt(index);
      if (character !== 10 && character !== 13) continue;
      const line = this.#pending + text.slice(start, index);
      this.#pending = '';
      if (character === 13) {
        if (index + 1 < text.length) {
          if (text.charCodeAt(index + 1) === 10) index++;
        } else {
          this.#afterCarriageReturn = true;
        }
      }
      start = index + 1;
      const event = this.#line(line);
      if (event !== undefined) yield event;
    }
    this.#pending += text.slice(start);
    if (this.#pending.length > MAX_EVENT_CHARACTERS) this.#tooLong();
  }

  #line(line: string): ServerSentEvent | undefined {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.#data.push(value);
      this.#dataCharacters += value.length + 1;
      if (this.#dataCharacters > MAX_EVENT_CHARACTERS) this.#tooLong();
    } else if (field === 'event') {
      this.#event = value;
    }
    return undefined;
  }

  #dispatch(): ServerSentEvent | undefined {
    const data = this.#data;
    const event = this.#event;
    this.#data = [];
    this.#dataCharacters = 0;
    this.#event = undefined;
    if (data.length === 0) return undefined;
    return { ...(event === undefined || event === '' ? {} : { event }), data: data.join('\n') };
  }

  #tooLong(): never {
    throw invalidResponseError(this.#provider, 200, `one streamed event holds more than ${MAX_EVENT_CHARACTERS} characters.`);
  }
}
