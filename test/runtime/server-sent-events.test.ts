import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_EVENT_CHARACTERS, readServerSentEvents, type ServerSentEvent } from '../../src/runtime/server-sent-events.ts';
import { rejectionOf } from '../helpers/provider-test-helpers.ts';
import { propertyRuns } from '../helpers/property.ts';

/** A body that delivers these byte chunks in order; `cancelled` is set when the reader cancels it. */
function body(chunks: Array<string | Uint8Array>): { stream: ReadableStream<Uint8Array>; state: { cancelled: boolean; pulled: number } } {
  const state = { cancelled: false, pulled: 0 };
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks.length) return controller.close();
      const chunk = chunks[state.pulled++];
      controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

async function read(chunks: Array<string | Uint8Array>): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(body(chunks).stream, 'test-sse')) events.push(event);
  return events;
}

describe('readServerSentEvents', () => {
  it('reads event types and data, joins data lines, skips comments and events without data', async () => {
    expect(
      await read([': a comment\n', 'event: message-start\ndata: {"a":1}\n\n', 'event: ping\n\n', 'data: one\ndata: two\nid: 7\nretry: 10\n\n', 'data\n\n']),
    ).toEqual([{ event: 'message-start', data: '{"a":1}' }, { data: 'one\ntwo' }, { data: '' }]);
  });

  it('takes \\n, \\r\\n and \\r as line ends, also when a \\r\\n is split between chunks', async () => {
    expect(await read(['data: a\r\n\r\ndata: b\r\rdata: c\r', '\n\r', '\ndata: d\n\n'])).toEqual([{ data: 'a' }, { data: 'b' }, { data: 'c' }, { data: 'd' }]);
  });

  it('strips one space after the colon, not more', async () => {
    expect(await read(['data:x\n\ndata:  y\n\n'])).toEqual([{ data: 'x' }, { data: ' y' }]);
  });

  it('decodes a character whose bytes are split between chunks', async () => {
    const bytes = new TextEncoder().encode('data: é€😀\n\n');
    const chunks = Array.from(bytes, (byte) => new Uint8Array([byte]));
    expect(await read(chunks)).toEqual([{ data: 'é€😀' }]);
  });

  it('drops an event cut off by the end of the body, as the format says', async () => {
    expect(await read(['data: whole\n\n', 'data: cut'])).toEqual([{ data: 'whole' }]);
    expect(await read(['data: whole\n\n', 'data: cut\n'])).toEqual([{ data: 'whole' }]);
  });

  it('yields nothing from a body that is no event stream (HTML, JSON, nothing)', async () => {
    expect(await read(['<html><body>Bad gateway</body></html>'])).toEqual([]);
    expect(await read(['{"choices": [{"delta'])).toEqual([]);
    expect(await read([])).toEqual([]);
    expect(await read(['\n\n\n'])).toEqual([]);
    const events: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(null, 'test-sse')) events.push(event);
    expect(events).toEqual([]);
  });

  it('refuses a line or an event longer than the limit instead of buffering without end', async () => {
    const huge = 'x'.repeat(MAX_EVENT_CHARACTERS + 1);
    const line = await rejectionOf(read(['data: ', huge]));
    expect(line).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', component: 'test-sse' });
    const half = 'y'.repeat(MAX_EVENT_CHARACTERS / 2);
    const event = await rejectionOf(read([`data: ${half}\ndata: ${half}\ndata: z\n`]));
    expect(event).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
  });

  it('cancels the body when the consumer leaves early', async () => {
    const { stream, state } = body(['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n']);
    for await (const event of readServerSentEvents(stream, 'test-sse')) {
      expect(event).toEqual({ data: '1' });
      break;
    }
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(3);
  });

  it('property: the same events however the body is cut into chunks', async () => {
    const event = fc.record(
      {
        event: fc.constantFrom('content-delta', 'message-end', 'x'),
        data: fc.array(fc.string({ unit: 'grapheme', maxLength: 8 }), { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: ['data'] },
    );
    const clean = (text: string) => text.replace(/[\r\n]/g, ' ');
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { maxLength: 6 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (events, eol, cuts) => {
          const expected = events.map(({ event: type, data }) => ({ ...(type === undefined ? {} : { event: type }), data: data.map(clean).join('\n') }));
          const text = events
            .map(
              ({ event: type, data }) =>
                `${type === undefined ? '' : `event: ${type}${eol}`}${data.map((line) => `data: ${clean(line)}${eol}`).join('')}${eol}`,
            )
            .join('');
          const bytes = new TextEncoder().encode(text);
          const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((left, right) => left - right);
          const chunks: Uint8Array[] = [];
          let start = 0;
          for (const point of [...points, bytes.length]) {
            chunks.push(bytes.slice(start, point));
            start = point;
          }
          expect(await read(chunks)).toEqual(expected);
        },
      ),
      propertyRuns(100),
    );
  });
});
