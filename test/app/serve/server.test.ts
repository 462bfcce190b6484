import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StageRecord } from '../../../src/pipeline/trace.ts';
import { isLoopback, serve, type AgenticRunView, type RunningServer, type RunView } from '../../../app/serve/index.ts';
import { ANSWER, CITED_SPANS, fixturePipeline, parseEvents, SUB_QUERY } from './fixture.ts';

let server: RunningServer;
let pipeline: Awaited<ReturnType<typeof fixturePipeline>>;

beforeAll(async () => {
  pipeline = await fixturePipeline();
  server = await serve(pipeline.rag, { traceStore: pipeline.traceStore });
});
afterAll(async () => {
  await server.close();
  await pipeline.rag.close();
});

const api = (path: string, init: RequestInit = {}) => fetch(`${server.origin}${path}`, { ...init, headers: { 'x-axon-token': server.token, ...init.headers } });
const ask = (body: unknown) => api('/api/ask', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('serve: the API', () => {
  it('listens on loopback and prints a URL carrying the token', () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).toBe(`${server.origin}/?token=${server.token}`);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
  });

  it('serves the page without external references', async () => {
    const response = await fetch(server.origin);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).toContain('<form id="ask">');
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('streams stage records, answer deltas and the result as server-sent events', async () => {
    const response = await ask({ question: 'How do I reset my password?' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const events = parseEvents(await response.text());
    const kinds = events.map((event) => event.event);
    expect(kinds.at(-1)).toBe('result');
    // First, how many documents the store held when the question was asked: what the question searched.
    expect(events[0]).toEqual({ event: 'store', data: { documents: await pipeline.rag.components().store.count() } });
    expect(kinds).toContain('stage');
    expect(kinds.indexOf('delta')).toBeGreaterThan(kinds.indexOf('stage'));
    const streamed = events.filter((event) => event.event === 'delta').map((event) => (event.data as { text: string }).text);
    expect(streamed.length).toBeGreaterThan(1);
    expect(streamed.join('')).toBe(ANSWER);
    const result = events.at(-1)!.data as RunView;
    expect(result.answer).toBe(ANSWER);
    expect(result.citations[0].label).toBe(1);
    const cited = result.chunks[result.citations[0].id];
    expect(cited.sourceName).toBe(result.citations[0].sourceName);
    expect(cited.content.length).toBeGreaterThan(10);
    // The runs of three or more words the citing sentence shares with the chunk.
    expect(result.citations[0].spans.map((span) => cited.content.slice(span.start, span.end))).toEqual(CITED_SPANS);
    const post = result.stages.find((stage: StageRecord) => stage.stage === 'post-process')!;
    expect(post.name).toBe('adaptive-threshold');
    expect(post.dropped.length).toBeGreaterThan(0);
    expect(post.dropped[0].reason).toMatch(/adaptive threshold [\d.]+ \(median/);
    // The run's usage: the local embedding model meters nothing; the scripted chat model reports no usage, so its call is unknown.
    expect(result.usage?.entries.map((entry) => [entry.kind, entry.provider, entry.calls, entry.unknownCalls])).toEqual([
      ['embeddings', 'local-hash-embeddings', 1, 0],
      ['chat', 'scripted-chat', 1, 1],
    ]);
  });

  it('never sends secret or unredacted text', async () => {
    const response = await ask({ question: 'What if the password link never arrives? What is the break-glass password?' });
    const text = await response.text();
    const result = parseEvents(text).at(-1)!.data as RunView;
    expect(result.stages.some((stage) => stage.stage === 'eligibility' && stage.dropped.some((drop) => /secret/.test(drop.reason)))).toBe(true);
    // The pii chunk is there, redacted, so the check below is about redaction rather than absence.
    expect(Object.values(result.chunks).find((chunk) => chunk.sourceName === 'help/contacts.md')?.content).toContain('EMAIL_REDACTED');
    expect(text).not.toContain('SECRET-ZEBRA-42');
    expect(text).not.toContain('alice.admin@example.com');
    const agentic = parseEvents(
      await (await ask({ question: 'What if the password link never arrives? What is the break-glass password?', agentic: true })).text(),
    );
    const agenticRun = agentic.at(-1)!.data as AgenticRunView;
    expect(JSON.stringify(agentic)).not.toContain('SECRET-ZEBRA-42');
    const runs = await (await api('/api/runs')).text();
    const stored = await (await api(`/api/runs/${result.runId}`)).text();
    const storedAgentic = await (await api(`/api/runs/${agenticRun.runId}`)).text();
    expect(storedAgentic).toContain('EMAIL_REDACTED');
    for (const body of [runs, stored, storedAgentic]) {
      expect(body).not.toContain('SECRET-ZEBRA-42');
      expect(body).not.toContain('alice.admin@example.com');
    }
  });

  it('streams an agentic run: each step as it starts and ends, the answer, then the result with span citations', async () => {
    const events = parseEvents(await (await ask({ question: 'How do I reset my password?', agentic: true })).text());
    const steps = events
      .filter((event) => event.event === 'agentic')
      .map((event) => event.data as { step: string; status: string; iteration: number; input: { query?: string } });
    expect(steps.some((step) => step.step === 'planning' && step.status === 'inProgress')).toBe(true);
    expect(steps.find((step) => step.step === 'retrieval' && step.iteration === 1)?.input.query).toBe(SUB_QUERY);
    expect(events.at(-1)!.event).toBe('agentic-result');
    const result = events.at(-1)!.data as AgenticRunView;
    expect(result.iterations).toBe(1);
    expect(result.planner).toBe('model');
    expect(result.answer).toBe(ANSWER.replace(' [1]', ''));
    expect(result.citations[0].references[0].resultIndex).toBe(0);
    expect(
      events
        .filter((event) => event.event === 'delta')
        .map((event) => (event.data as { text: string }).text)
        .join(''),
    ).toBe(result.answer);
  });

  it('lists past runs, newest first, and returns one by id with the chunks it cited', async () => {
    const { runs } = (await (await api('/api/runs')).json()) as { runs: { runId: string; kind: string; question: string }[] };
    // Asked so far, oldest first: two pipeline runs, then two agentic ones.
    expect(runs.map((run) => run.kind)).toEqual(['agentic', 'agentic', 'pipeline', 'pipeline']);
    expect(runs[3].question).toBe('How do I reset my password?');
    const run = (await (await api(`/api/runs/${runs[3].runId.slice(0, 8)}`)).json()) as RunView;
    expect(run.runId).toBe(runs[3].runId);
    expect(run.kind).toBe('pipeline');
    expect(run.answer).toBe(ANSWER);
    expect(Object.keys(run.chunks)).toContain(run.citations[0].id);
    // The chunk is the evidence the model saw, without its <evidence> frame, and the cited span is the same as live.
    const chunk = run.chunks[run.citations[0].id];
    expect(chunk.content).toBe('To reset your password, open Settings, then Security, then choose Reset password.');
    expect(run.citations[0].spans.map((span) => chunk.content.slice(span.start, span.end))).toEqual(CITED_SPANS);
    expect(run.stages.map((stage) => stage.stage)).toContain('post-process');
    expect(run.usage).toMatchObject({ calls: 2, unknownCalls: 1 });
    expect((await api('/api/runs/ffffffff-none')).status).toBe(404);
  });

  it('saves agentic runs: listed among past runs, returned with their steps and the stages of each search', async () => {
    const events = parseEvents(await (await ask({ question: 'How do I reset my password?', agentic: true, topK: 2, searchMode: 'keyword' })).text());
    const live = events.at(-1)!.data as AgenticRunView;
    const { runs } = (await (await api('/api/runs')).json()) as { runs: { runId: string; kind: string }[] };
    expect(runs[0]).toMatchObject({ runId: live.runId, kind: 'agentic' });
    const stored = (await (await api(`/api/runs/${live.runId}`)).json()) as AgenticRunView;
    expect(stored.kind).toBe('agentic');
    expect(stored.answer).toBe(live.answer);
    expect(stored.citations).toEqual(live.citations);
    const retrieval = stored.steps!.find((step) => step.step === 'retrieval')!;
    expect(retrieval).toMatchObject({ iteration: 1, status: 'succeeded', input: { query: SUB_QUERY } });
    // The request's topK and search mode reach every search of the run.
    const { stages } = retrieval.output!.pipeline as { stages: StageRecord[] };
    const searches = stages.filter((stage) => stage.stage === 'search');
    expect(searches.map((stage) => stage.name)).toEqual(['memory-store:keyword']);
    expect(searches[0].detail?.topK).toBe(2);
    expect(searches[0].outputIds.length).toBeLessThanOrEqual(2);
    // The span the answer cites, found again inside the cited result's text.
    const reference = stored.citations[0].references[0];
    const content = stored.results[reference.resultIndex].content;
    expect(reference.spans.map((span) => content.slice(span.start, span.end))).toEqual(CITED_SPANS);
  });

  it('refuses API calls without the right token, from foreign origins and on foreign Host names', async () => {
    expect((await fetch(`${server.origin}/api/runs`)).status).toBe(403);
    expect((await fetch(`${server.origin}/api/runs?token=wrong`)).status).toBe(403);
    expect((await fetch(`${server.origin}/api/runs?token=${server.token}`)).status).toBe(200);
    expect((await fetch(`${server.origin}/api/runs`, { headers: { authorization: `Bearer ${server.token}` } })).status).toBe(200);
    const foreign = await api('/api/runs', { headers: { origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const call = request(`${server.origin}/api/runs`, { headers: { host: 'rebound.example', 'x-axon-token': server.token } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      call.on('error', reject);
      call.end();
    });
    expect(status).toBe(403);
  });

  it('validates and size-limits the ask body', async () => {
    expect((await ask({ question: '' })).status).toBe(400);
    expect((await ask({ question: 'x', apiKey: 'sk-1' })).status).toBe(400);
    expect((await ask({ question: 'x', topK: -1 })).status).toBe(400);
    expect((await api('/api/ask', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' })).status).toBe(400);
    expect((await api('/api/ask', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })).status).toBe(415);
    expect((await ask({ question: 'x'.repeat(70_000) })).status).toBe(413);
    expect((await api('/api/ask')).status).toBe(405);
  });

  it('names the option a misspelt key of the ask body was meant as', async () => {
    const response = await ask({ question: 'x', topk: 5 });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'topk: unknown option "topk" (did you mean "topK"?)' });
  });
});

describe('serve: where it listens', () => {
  it('refuses a non-loopback host unless allowRemote, and warns when allowed', async () => {
    const { rag } = await fixturePipeline();
    await expect(serve(rag, { host: '0.0.0.0' })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    const warnings: string[] = [];
    const open = await serve(rag, { host: '0.0.0.0', allowRemote: true, onWarning: (message) => warnings.push(message) });
    await open.close();
    expect(warnings.join('')).toMatch(/0\.0\.0\.0/);
    await expect(serve(rag, { token: 'short' })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('knows loopback addresses', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', 'localhost'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '192.168.1.2', '::', 'example.com'].map(isLoopback)).toEqual([false, false, false, false]);
  });
});
