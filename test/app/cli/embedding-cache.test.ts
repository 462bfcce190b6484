import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startOpenAIServer } from '../../servers/openai-server.ts';
import { runAxon } from '../../helpers/cli.ts';

let root: string;
let server: LoopbackServer;

beforeAll(async () => {
  server = await startOpenAIServer({ dimensions: 8 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-cli-cache-'));
  server.reset();
  await mkdir(join(root, 'docs'), { recursive: true });
  for (const topic of ['bearings', 'pulleys', 'levers'])
    await writeFile(join(root, `docs/${topic}.md`), `# ${topic}\n\n${Array.from({ length: 60 }, (_, index) => `${topic}${index}`).join(' ')}\n`);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const packsIn = async (directory: string) => (await readdir(directory).catch(() => [])).filter((name) => name.endsWith('.vectors'));

describe('axon ingest with the embedding cache', () => {
  it('keeps vectors beside the store by default, so a second store embeds nothing, and says so', async () => {
    const first = await runAxon(root, ['ingest', 'docs', '--json']);
    expect(first.code).toBe(0);
    const firstSummary = JSON.parse(first.stdout);
    expect(firstSummary.embeddingCache).toEqual({ location: join(root, '.axon-cache/embeddings'), hits: 0, misses: firstSummary.chunksAdded, damaged: 0 });
    expect(firstSummary.embeddingTokens).toBe(0);
    expect(await packsIn(join(root, '.axon-cache/embeddings'))).not.toHaveLength(0);

    const second = await runAxon(root, ['ingest', 'docs', '--store', '.axon-second']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(
        `^Done in \\d+ ms: 3 ingested \\(${firstSummary.chunksAdded} chunks\\), 0 unchanged, 0 skipped, 0 failed; 0 embedded, ${firstSummary.chunksAdded} from the embedding cache\\.$`,
      ),
    );
  });

  it('takes another folder with --embedding-cache and none with --no-embedding-cache', async () => {
    const chosen = await runAxon(root, ['ingest', 'docs', '--embedding-cache', 'shared-cache', '--json']);
    expect(JSON.parse(chosen.stdout).embeddingCache.location).toBe(join(root, 'shared-cache'));
    expect(await packsIn(join(root, 'shared-cache'))).not.toHaveLength(0);

    const without = await runAxon(root, ['ingest', 'docs', '--store', '.axon-none', '--no-embedding-cache', '--json']);
    expect(without.code).toBe(0);
    expect(JSON.parse(without.stdout).embeddingCache).toBeUndefined();
    await expect(stat(join(root, '.axon-cache'))).rejects.toMatchObject({ code: 'ENOENT' });

    const both = await runAxon(root, ['ingest', 'docs', '--embedding-cache', 'x', '--no-embedding-cache']);
    expect(both.code).toBe(2);
  });

  it('counts the tokens an OpenAI-compatible service reports, and reuses its vectors in a configured pipeline', async () => {
    const config = (store: string) =>
      JSON.stringify({ embeddings: { provider: 'openai', model: 'nomic-embed-text', baseURL: `${server.url}/v1` }, store: { type: 'file', directory: store } });
    await writeFile(join(root, 'one.json'), config('stores/one'));
    await writeFile(join(root, 'two.json'), config('stores/two'));
    const first = JSON.parse((await runAxon(root, ['ingest', 'docs', '--config', 'one.json', '--json'])).stdout);
    const requests = server.requestsTo('/v1/embeddings').length;
    // The loopback server counts a token per input.
    expect(first.embeddingTokens).toBe(first.chunksAdded);
    expect(first.embeddingCache.location).toBe(join(root, 'stores/.axon-cache/embeddings'));

    const second = JSON.parse((await runAxon(root, ['ingest', 'docs', '--config', 'two.json', '--json'])).stdout);
    expect(server.requestsTo('/v1/embeddings')).toHaveLength(requests);
    expect(second.embeddingCache).toMatchObject({ hits: first.chunksAdded, misses: 0 });
    expect(second.embeddingTokens).toBe(0);
    expect(second.embeddingRequests).toBe(0);
    expect(first.embeddingRequests).toBe(requests);

    // A store that keeps nothing on local disk: the command still caches, beside its .axon folder.
    await writeFile(join(root, 'memory.json'), JSON.stringify({ ...JSON.parse(config('unused')), store: { type: 'memory' } }));
    const memory = JSON.parse((await runAxon(root, ['ingest', 'docs', '--config', 'memory.json', '--json'])).stdout);
    expect(memory.embeddingCache).toMatchObject({ location: join(root, '.axon-cache/embeddings'), misses: first.chunksAdded });
    const memoryAgain = JSON.parse((await runAxon(root, ['ingest', 'docs', '--config', 'memory.json', '--json'])).stdout);
    expect(memoryAgain.embeddingCache).toMatchObject({ hits: first.chunksAdded, misses: 0 });

    // A configuration may turn it off.
    await writeFile(join(root, 'off.json'), JSON.stringify({ ...JSON.parse(config('stores/three')), embeddingCache: false }));
    const off = JSON.parse((await runAxon(root, ['ingest', 'docs', '--config', 'off.json', '--json'])).stdout);
    expect(off.embeddingCache).toBeUndefined();
    expect(server.requestsTo('/v1/embeddings').length).toBeGreaterThan(2 * requests);
  });

  it('leaves a provider that does not declare its identity uncached, and says so; asking for a cache for it is an error', async () => {
    await writeFile(
      join(root, 'plugin.mjs'),
      `export function register(registry) {
  registry.register({
    kind: 'embeddings',
    name: 'anonymous',
    options: { safeParse: (value) => ({ success: true, data: value }) },
    create: () => ({ name: 'anonymous-embeddings', dimensions: 3, maxBatchSize: 16, maxParallelCalls: 1, embed: async (texts) => texts.map((text) => [text.length, 1, 2]) }),
  });
}
`,
    );
    await writeFile(
      join(root, 'anonymous.json'),
      JSON.stringify({ plugins: ['./plugin.mjs'], embeddings: { provider: 'anonymous' }, store: { type: 'memory' } }),
    );
    const result = await runAxon(root, ['ingest', 'docs', '--config', 'anonymous.json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('The embedding cache is off: anonymous-embeddings does not declare its identity');
    expect(result.stdout).toMatch(/; \d+ embedded \(tokens unknown\)\.$/);

    await writeFile(
      join(root, 'asked.json'),
      JSON.stringify({ plugins: ['./plugin.mjs'], embeddings: { provider: 'anonymous' }, store: { type: 'memory' }, embeddingCache: { directory: 'cache' } }),
    );
    const asked = await runAxon(root, ['ingest', 'docs', '--config', 'asked.json']);
    expect(asked.code).not.toBe(0);
    expect(asked.stderr).toMatch(/embeddingCache: "anonymous-embeddings" does not declare its identity/);
  });
});
