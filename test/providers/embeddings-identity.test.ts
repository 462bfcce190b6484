import { describe, expect, it } from 'vitest';
import { AISdkEmbeddings } from '../../providers/ai-sdk/ai-sdk-embeddings.ts';
import { AzureOpenAIEmbeddings } from '../../providers/azure/azure-openai-embeddings.ts';
import { CohereEmbeddings } from '../../providers/cohere/cohere-embeddings.ts';
import { GeminiEmbeddings } from '../../providers/gemini/gemini-embeddings.ts';
import { JinaEmbeddings } from '../../providers/jina/jina-embeddings.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { MistralEmbeddings } from '../../providers/mistral/mistral-embeddings.ts';
import { OllamaEmbeddings } from '../../providers/ollama/ollama-embeddings.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import { VoyageEmbeddings } from '../../providers/voyage/voyage-embeddings.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import { CachedEmbeddings } from '../../src/runtime/cached-embeddings.ts';

const apiKey = 'test-key-for-identity';

/**
 * Each built-in provider with its base options, and options that each change the vectors: every one of them must
 * give another cache key, and the same options the same key.
 */
const cases: Array<{
  name: string;
  build: (options: Record<string, unknown>) => EmbeddingsProvider;
  base: Record<string, unknown>;
  changes: Record<string, unknown>[];
}> = [
  {
    name: 'openai',
    build: (options) => new OpenAIEmbeddings({ apiKey, ...options }),
    base: {},
    changes: [{ model: 'text-embedding-3-large' }, { dimensions: 512 }, { baseURL: 'http://localhost:11434/v1' }],
  },
  {
    name: 'cohere',
    build: (options) => new CohereEmbeddings({ apiKey, ...options }),
    base: {},
    changes: [{ model: 'embed-english-v3.0' }, { dimensions: 512 }, { baseURL: 'https://cohere.example' }, { truncate: 'START' }],
  },
  {
    name: 'jina',
    build: (options) => new JinaEmbeddings({ apiKey, ...options }),
    base: {},
    changes: [
      { model: 'jina-embeddings-v4' },
      { dimensions: 256 },
      { baseURL: 'https://jina.example/v1' },
      { documentTask: null },
      { queryTask: 'text-matching' },
    ],
  },
  {
    name: 'gemini',
    build: (options) => new GeminiEmbeddings({ apiKey, ...options }),
    base: {},
    changes: [{ model: 'text-embedding-004' }, { dimensions: 768 }, { baseURL: 'https://gemini.example/v1beta' }, { documentTaskType: 'SEMANTIC_SIMILARITY' }],
  },
  {
    name: 'voyage',
    build: (options) => new VoyageEmbeddings({ apiKey, ...options }),
    base: {},
    changes: [{ model: 'voyage-3-large' }, { dimensions: 256 }, { baseURL: 'https://voyage.example/v1' }, { truncation: false }],
  },
  {
    name: 'mistral',
    build: (options) => new MistralEmbeddings({ apiKey, ...options }),
    base: {},
    changes: [{ model: 'codestral-embed' }, { dimensions: 256 }, { baseURL: 'https://mistral.example/v1' }],
  },
  {
    name: 'azure-openai',
    build: (options) => new AzureOpenAIEmbeddings({ apiKey, endpoint: 'https://one.openai.azure.com', deployment: 'embeddings', ...options }),
    base: {},
    changes: [{ deployment: 'embeddings-large' }, { endpoint: 'https://two.openai.azure.com' }, { dimensions: 256 }],
  },
  {
    name: 'ollama',
    build: (options) => new OllamaEmbeddings({ host: 'http://localhost:11434', ...options }),
    base: {},
    changes: [{ model: 'mxbai-embed-large' }, { dimensions: 256 }, { host: 'http://gpu-box:11434' }, { truncate: false }],
  },
  {
    name: 'local-hash',
    build: (options) => new LocalHashEmbeddings(options),
    base: {},
    changes: [{ dimensions: 256 }, { characterNgrams: [3] }, { wordWeight: 2 }, { bigramWeight: 0 }, { characterNgramWeight: 0.5 }],
  },
];

describe('the identity of each embeddings provider', () => {
  for (const { name, build, base, changes } of cases) {
    it(`${name}: the same options give the same key; a change of model, dimensions, endpoint or setting another`, () => {
      const keyOf = (options: Record<string, unknown>) => new CachedEmbeddings(build({ ...base, ...options })).keyOf('text', 'document');
      expect(keyOf({})).toBe(keyOf({}));
      const keys = new Set([keyOf({}), ...changes.map(keyOf)]);
      expect(keys.size).toBe(changes.length + 1);
    });
  }

  it('an AI SDK model declares none (its provider object may hide a base URL or settings), so it is cached only when told what it is', () => {
    const model = {
      specificationVersion: 'v3' as const,
      provider: 'openai.embedding',
      modelId: 'text-embedding-3-small',
      maxEmbeddingsPerCall: 100,
      supportsParallelCalls: true,
      doEmbed: async () => ({ embeddings: [[1, 2, 3]], warnings: [] }),
    };
    const provider = new AISdkEmbeddings(model as unknown as ConstructorParameters<typeof AISdkEmbeddings>[0]);
    expect((provider as EmbeddingsProvider).identity).toBeUndefined();
    expect(() => new CachedEmbeddings(provider)).toThrow(/cannot be cached safely/);
  });
});
