/**
 * A reader of newline-delimited JSON bodies (`application/x-ndjson`, Ollama's streams) for adapters that stream
 * over plain `fetch`. It yields the lines; what they mean is the adapter's business.
 */
import { invalidResponseError } from './http-errors.ts';
import { MAX_EVENT_CHARACTERS } from './server-sent-events.ts';

/**
 * The non-blank lines of a body, in order, without their line ends (`\n` or `\r\n`). A last line without a line
 * end is yielded too: a cut-off JSON line then fails to parse in the adapter, and is reported there.
 *
 * @throws ProviderError `PROVIDER_RESPONSE_INVALID` (naming `provider`) when one line passes `MAX_EVENT_CHARACTERS`;
 * read errors of the body (a lost connection, an abort) are passed on as they are.
 */
export async function* readJsonLines(body: ReadableStream<Uint8Array> | null, provider: string): AsyncGenerator<string> {
  if (body === null) return;
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let done = false;
  try {
    while (true) {
      const chunk = await reader.read();
      const text = chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      pending += text;
      let newline = pending.indexOf('\n');
      while (newline !== -1) {
        const line = pending.slice(0, newline).replace(/\r$/, '');
        pending = pending.slice(newline + 1);
        if (line.trim() !== '') yield line;
        newline = pending.indexOf('\n');
      }
      if (pending.length > MAX_EVENT_CHARACTERS)
        throw invalidResponseError(provider, 200, `one streamed line holds more than ${MAX_EVENT_CHARACTERS} characters.`);
      if (chunk.done) break;
    }
    if (pending.trim() !== '') yield pending;
    done = true;
  } finally {
    // Left early (or failed): stop the body so the connection is not kept reading.
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
