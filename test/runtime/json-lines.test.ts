import { describe, expect, it } from 'vitest';
import { readJsonLines } from '../../src/runtime/json-lines.ts';

function bodyOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function linesOf(chunks: string[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of readJsonLines(bodyOf(chunks), 'test')) lines.push(line);
  return lines;
}

describe('readJsonLines', () => {
  it('yields each non-blank line, across chunk boundaries and CRLF line ends', async () => {
    expect(await linesOf(['{"a":', '1}\n\n{"b":2}\r', '\n{"c"', ':3}\n'])).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('yields a last line without its line end, so a cut-off line is seen (and fails to parse) rather than lost', async () => {
    expect(await linesOf(['{"a":1}\n{"b":'])).toEqual(['{"a":1}', '{"b":']);
  });

  it('keeps a character split across chunks whole', async () => {
    const bytes = new TextEncoder().encode('{"t":"é"}\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const lines: string[] = [];
    for await (const line of readJsonLines(body, 'test')) lines.push(line);
    expect(lines).toEqual(['{"t":"é"}']);
  });
});
