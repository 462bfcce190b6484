/**
 * `axon serve` against clients that do not play along, over real sockets: Host headers built to pass a loose
 * check, bodies and headers that never finish, a busy port, errors that would tell the page where the store lives,
 * and what the Content-Security-Policy lets run.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_SCRIPT, PAGE_STYLE, serve, type RunningServer } from '../../../app/serve/index.ts';
import { isLoopbackHostHeader } from '../../../app/serve/server.ts';
import { runAxon } from '../../helpers/cli.ts';
import { fixturePipeline } from './fixture.ts';

let server: RunningServer;
let pipeline: Awaited<ReturnType<typeof fixturePipeline>>;
let port: number;

beforeAll(async () => {
  pipeline = await fixturePipeline();
  server = await serve(pipeline.rag, { traceStore: pipeline.traceStore, headersTimeoutMs: 400, requestTimeoutMs: 800 });
  port = Number(new URL(server.origin).port);
});
afterAll(async () => {
  await server.close();
  await pipeline.rag.close();
});

/** Open a raw connection and write `text`; resolves with everything the server sent once it closes the connection. */
function rawExchange(text: string, options: { trickle?: string; everyMs?: number } = {}): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (part: string) => (received += part));
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<string>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve(received);
    });
    socket.on('error', () => {});
  });
  socket.write(text);
  if (options.trickle !== undefined) {
    let at = 0;
    timer = setInterval(() => {
      if (at < options.trickle!.length && !socket.destroyed) socket.write(options.trickle![at++]);
    }, options.everyMs ?? 100);
  }
  return { socket, closed };
}

function statusOf(response: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
}

describe('the Host header', () => {
  it('must be exactly a loopback host and, when it has one, this server port', async () => {
    const hosts: [string, number][] = [
      [`127.0.0.1:${port}`, 200],
      [`localhost:${port}`, 200],
      ['127.0.0.1', 200],
      [`127.0.0.1:1@evil.example:${port}`, 403],
      ['127.0.0.1:1@evil.example', 403],
      [`127.0.0.1:${port + 1}`, 403],
      [`127.0.0.1:${port}:${port}`, 403],
      [`127.0.0.1.evil.example:${port}`, 403],
      [`127.0.0.1/evil:${port}`, 403],
      [`127.999.0.1:${port}`, 403],
      [`evil.example:${port}`, 403],
    ];
    for (const [host, expected] of hosts) {
      const { closed } = rawExchange(`GET /api/runs?token=${server.token} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(statusOf(await closed), host).toBe(expected);
    }
  });

  it('isLoopbackHostHeader parses rather than splits', () => {
    expect(isLoopbackHostHeader('[::1]:8080', 8080)).toBe(true);
    expect(isLoopbackHostHeader('[::1]:8081', 8080)).toBe(false);
    expect(isLoopbackHostHeader('LOCALHOST', 8080)).toBe(true);
    expect(isLoopbackHostHeader('127.0.0.1:1@evil.com', 8080)).toBe(false);
    expect(isLoopbackHostHeader('[::1]@evil.com', 8080)).toBe(false);
    expect(isLoopbackHostHeader(undefined, 8080)).toBe(false);
  });
});

describe('time limits', () => {
  it('answers 408 and closes a request whose body arrives a byte at a time', async () => {
    const head = `POST /api/ask?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`;
    const { closed } = rawExchange(head, { trickle: '{"question":"'.padEnd(200, 'a'), everyMs: 100 });
    const response = await closed;
    expect(statusOf(response)).toBe(408);
  }, 20_000);

  it('closes sixty connections that never finish their headers', async () => {
    const exchanges = Array.from({ length: 60 }, () => rawExchange(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `));
    const responses = await Promise.all(exchanges.map((exchange) => exchange.closed));
    expect(responses.every((response) => statusOf(response) === 408 || response === '')).toBe(true);
    expect(exchanges.every((exchange) => exchange.socket.destroyed)).toBe(true);
  }, 20_000);

  it('does not cut an answer that streams for longer than the request limit', async () => {
    // The request arrives at once; the model then takes longer than requestTimeoutMs (800 ms) to answer.
    const slow = await fixturePipeline();
    const chat = slow.chat as unknown as { stream: (...args: unknown[]) => AsyncIterable<string> };
    const stream = chat.stream.bind(slow.chat);
    chat.stream = async function* (...args: unknown[]) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      yield* stream(...args);
    };
    const slowServer = await serve(slow.rag, { headersTimeoutMs: 400, requestTimeoutMs: 800 });
    try {
      const response = await fetch(`${slowServer.origin}/api/ask?token=${slowServer.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'How do I reset my password?' }),
      });
      const text = await response.text();
      expect(text).toContain('event: result');
      expect(text).toContain('choose Reset password');
    } finally {
      await slowServer.close();
      await slow.rag.close();
    }
  }, 20_000);

  it('refuses a request limit shorter than the headers limit', async () => {
    await expect(serve(pipeline.rag, { headersTimeoutMs: 2000, requestTimeoutMs: 1000 })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('requestTimeoutMs'),
    });
  });
});

describe('what the page is told', () => {
  it('a run id that is not stored is a 404 that names no file of the server', async () => {
    const response = await fetch(`${server.origin}/api/runs/ffffffff-none?token=${server.token}`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string };
    expect(body).toEqual({ error: 'No stored run has an id starting with ffffffff-none.' });
    expect(JSON.stringify(body)).not.toContain(pipeline.directory);
  });

  it('the Content-Security-Policy runs only the served script, by nonce, and no inline script or style attribute', async () => {
    const [first, second] = [await fetch(server.origin), await fetch(server.origin)];
    const policy = first.headers.get('content-security-policy')!;
    expect(policy).not.toContain('unsafe-inline');
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(policy)?.[1];
    expect(nonce).toBeDefined();
    expect(policy).toContain("style-src 'self'");
    // A fresh nonce per page.
    expect(second.headers.get('content-security-policy')).not.toContain(nonce);
    const html = await first.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0][2]).toBe('');
    expect(scripts[0][1]).toContain(`nonce="${nonce}"`);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/);
    const integrity = /integrity="(sha256-[^"]+)"/.exec(scripts[0][1])?.[1];
    const script = await fetch(`${server.origin}/page.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const body = await script.text();
    expect(body).toBe(PAGE_SCRIPT);
    expect(integrity).toBe(`sha256-${createHash('sha256').update(body).digest('base64')}`);
    const style = await fetch(`${server.origin}/page.css`);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await style.text()).toBe(PAGE_STYLE);
  });
});

describe('a busy port', () => {
  it('is said to be in use, with --port 0 as the way out, not reported as a bug', async () => {
    await expect(serve(pipeline.rag, { port })).rejects.toMatchObject({
      code: 'ADDRESS_IN_USE',
      details: { port, host: '127.0.0.1' },
      message: expect.stringContaining(`Port ${port} on 127.0.0.1 is already in use`),
    });
    const result = await runAxon(pipeline.directory, ['serve', '--port', String(port)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `axon: [serve] Port ${port} on 127.0.0.1 is already in use (another axon serve, or another program). ` +
        'Stop the other server, or choose another port: --port 0 picks a free one (port: 0 from code), or --port N another.',
    );
  });
});
