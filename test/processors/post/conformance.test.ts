import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveThreshold } from '../../../processors/post/adaptive-threshold.ts';
import { Dedupe } from '../../../processors/post/dedupe.ts';
import { FixedThreshold } from '../../../processors/post/fixed-threshold.ts';
import { LLMReranker } from '../../../processors/post/llm-reranker.ts';
import { MMR } from '../../../processors/post/mmr.ts';
import { RerankerPostProcessor } from '../../../processors/post/reranker-post-processor.ts';
import { TopN } from '../../../processors/post/top-n.ts';
import { BUILT_IN_COMPONENTS } from '../../../app/config/built-ins.ts';
import { CohereReranker, JinaReranker, LocalAIReranker, VoyageReranker } from '../../../app/config/service-rerankers.ts';
import type { Reranker, RerankOptions, RerankResult } from '../../../src/contracts/reranker.ts';
import { throwIfAborted } from '../../../src/errors.ts';
import { describePostProcessorConformance } from '../../../testing/post-processor.ts';
import { documentIdsIn, ScriptedChat } from '../../helpers/scripted-chat.ts';
import { TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import { startJinaServer } from '../../servers/jina-server.ts';
import { startLocalAIServer } from '../../servers/localai-server.ts';
import { startVoyageServer } from '../../servers/voyage-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let cohere: LoopbackServer;
let jina: LoopbackServer;
let localAI: LoopbackServer;
let voyage: LoopbackServer;
beforeAll(async () => {
  [cohere, jina, localAI, voyage] = await Promise.all([startCohereServer(), startJinaServer(), startLocalAIServer(), startVoyageServer()]);
});
afterAll(async () => {
  await Promise.all([cohere.close(), jina.close(), localAI.close(), voyage.close()]);
});

/** Ranks by the length of the text, shortest first: deterministic and unlike the incoming order. */
class ShortestFirstReranker implements Reranker {
  readonly name = 'shortest-first';
  readonly maxDocumentsPerCall = 4;
  async rerank(_query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    throwIfAborted(options.signal, this.name);
    return documents
      .map((document, index) => ({ index, relevanceScore: 1 / (1 + document.length) }))
      .sort((left, right) => right.relevanceScore - left.relevanceScore)
      .slice(0, options.topN);
  }
}

/** Every built-in post-processor, as its configuration name and a factory. */
const BUILT_INS: Record<string, () => import('../../../src/contracts/post-processor.ts').PostProcessor> = {
  'fixed-threshold': () => new FixedThreshold({ threshold: 0.65 }),
  'adaptive-threshold': () => new AdaptiveThreshold(),
  'top-n': () => new TopN({ n: 3 }),
  dedupe: () => new Dedupe(),
  mmr: () => new MMR({ k: 3 }),
  'jina-reranker': () => new JinaReranker({ apiKey: TEST_KEY, baseURL: `${jina.url}/v1`, maxRetries: 0 }),
  'cohere-reranker': () => new CohereReranker({ apiKey: TEST_KEY, baseURL: cohere.url, maxRetries: 0 }),
  'localai-reranker': () => new LocalAIReranker({ host: localAI.url, maxRetries: 0 }),
  'voyage-reranker': () => new VoyageReranker({ apiKey: TEST_KEY, baseURL: `${voyage.url}/v1`, maxRetries: 0 }),
  'llm-reranker': () => new LLMReranker({ chat: new ScriptedChat((call) => JSON.stringify(documentIdsIn(call.prompt).slice(1, 4))) }),
};

for (const [name, create] of Object.entries(BUILT_INS)) describePostProcessorConformance(name, create);
describePostProcessorConformance('reranker-post-processor (any Reranker)', () => new RerankerPostProcessor({ reranker: new ShortestFirstReranker(), topN: 2 }));

describe('post-processor conformance coverage', () => {
  it('runs for every post-processor the configuration registry knows', () => {
    const registered = BUILT_IN_COMPONENTS.filter((definition) => definition.kind === 'post-processor').map((definition) => definition.name);
    expect(Object.keys(BUILT_INS).sort()).toEqual(registered.sort());
  });
});
