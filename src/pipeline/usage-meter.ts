import type { ChatOptions, ChatProvider } from '../contracts/chat.ts';
import type { EmbeddingsProvider, EmbedOptions } from '../contracts/embeddings.ts';
import type { Reranker, RerankOptions } from '../contracts/reranker.ts';
import type { UsageMeter } from '../contracts/run-context.ts';
import type { Usage } from '../contracts/usage.ts';
import { type UsageSource, type UsageTally, usageSource } from './usage.ts';

/** Span attributes, as OpenTelemetry takes them. */
export type CallAttributes = Record<string, string | number>;

/** Reports each provider call as a span (`trace.ts` makes them children of the stage that called). */
export interface CallSpans {
  start(name: string, attributes: CallAttributes): { end(attributes: CallAttributes): void; fail(error: unknown): void };
}

/**
 * The `UsageMeter` a run hands its stages (`RunContext.usage`): the provider it is given comes back as a proxy whose
 * `complete`, `stream`, `embed` and `rerank` listen to `onUsage` (passing each report on to the caller's own
 * listener) and add the call to every tally (the stage's and the run's); every other member is the provider's own.
 * Each call is also a client span named and attributed after OpenTelemetry's GenAI conventions (`chat gpt-4o-mini`
 * with `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`,
 * `gen_ai.usage.output_tokens`), when spans are reported.
 */
export class RunUsageMeter implements UsageMeter {
  constructor(
    private readonly tallies: readonly UsageTally[],
    private readonly spans?: CallSpans,
  ) {}

  chat(provider: ChatProvider): ChatProvider {
    const source = usageSource('chat', provider);
    return proxy(provider, {
      complete: (messages: Parameters<ChatProvider['complete']>[0], options?: ChatOptions) =>
        this.call(source, options, (listened) => provider.complete(messages, listened)),
      stream: (messages: Parameters<ChatProvider['stream']>[0], options?: ChatOptions) => this.stream(source, provider, messages, options),
    });
  }

  embeddings(provider: EmbeddingsProvider): EmbeddingsProvider {
    const source = usageSource('embeddings', provider);
    return proxy(provider, {
      embed: (texts: string[], options: EmbedOptions) => this.call(source, options, (listened) => provider.embed(texts, listened as EmbedOptions)),
    });
  }

  reranker(provider: Reranker): Reranker {
    const source = usageSource('rerank', provider);
    return proxy(provider, {
      rerank: (query: string, documents: string[], options: RerankOptions) =>
        this.call(source, options, (listened) => provider.rerank(query, documents, listened as RerankOptions)),
    });
  }

  /** One call that returns a promise: counted when it resolves, with what was reported by then. */
  private async call<Options extends { onUsage?: (usage: Usage) => void }, Result>(
    source: UsageSource,
    options: Options | undefined,
    run: (options: Options) => Promise<Result>,
  ): Promise<Result> {
    const reports: Usage[] = [];
    const call = this.begin(source);
    try {
      const result = await run(listening(options, reports));
      call.end(reports);
      return result;
    } catch (error) {
      call.fail(error);
      throw error;
    }
  }

  /** A streamed reply: counted when it ends, or when its reader leaves early (then its usage is usually unknown). */
  private async *stream(source: UsageSource, provider: ChatProvider, messages: Parameters<ChatProvider['stream']>[0], options?: ChatOptions) {
    const reports: Usage[] = [];
    const call = this.begin(source);
    let failed = false;
    try {
      yield* provider.stream(messages, listening(options, reports));
    } catch (error) {
      failed = true;
      call.fail(error);
      throw error;
    } finally {
      if (!failed) call.end(reports);
    }
  }

  private begin(source: UsageSource): { end(reports: readonly Usage[]): void; fail(error: unknown): void } {
    const operation = source.kind === 'rerank' ? 'rerank' : source.kind;
    const span = this.spans?.start(source.model === undefined ? operation : `${operation} ${source.model}`, {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': source.genAiProvider ?? source.provider,
      ...(source.model === undefined ? {} : { 'gen_ai.request.model': source.model }),
      'axon.component': source.provider,
    });
    return {
      end: (reports) => {
        for (const tally of this.tallies) tally.record(source, reports);
        span?.end(usageAttributes(reports));
      },
      fail: (error) => span?.fail(error),
    };
  }
}

// --- Internal helpers ---

/** The caller's options with a listener that keeps every report and passes it on to the caller's own. */
function listening<Options extends { onUsage?: (usage: Usage) => void }>(options: Options | undefined, reports: Usage[]): Options {
  const own = options?.onUsage;
  return {
    ...(options as Options),
    onUsage: (usage: Usage) => {
      reports.push(usage);
      own?.(usage);
    },
  };
}

/** `provider` with some methods replaced; every other member is read from the provider itself (its getters, its private fields). */
function proxy<Provider extends object>(provider: Provider, methods: Record<string, (...parameters: never[]) => unknown>): Provider {
  return new Proxy(provider, {
    get(target, property) {
      if (typeof property === 'string' && Object.hasOwn(methods, property)) return methods[property];
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A call's usage as span attributes: GenAI's token counts, or `axon.usage: unknown` when the service reported none. */
function usageAttributes(reports: readonly Usage[]): CallAttributes {
  const counted = reports.filter((usage) => usage !== 'unknown' && typeof usage === 'object' && usage !== null) as Exclude<Usage, 'unknown'>[];
  if (counted.length === 0) return { 'axon.usage': 'unknown' };
  const attributes: CallAttributes = {};
  const sum = (field: 'inputTokens' | 'outputTokens' | 'searchUnits') =>
    counted.some((usage) => usage[field] !== undefined) ? counted.reduce((total, usage) => total + (usage[field] ?? 0), 0) : undefined;
  const input = sum('inputTokens');
  const output = sum('outputTokens');
  const searchUnits = sum('searchUnits');
  if (input !== undefined) attributes['gen_ai.usage.input_tokens'] = input;
  if (output !== undefined) attributes['gen_ai.usage.output_tokens'] = output;
  if (searchUnits !== undefined) attributes['axon.usage.search_units'] = searchUnits;
  return attributes;
}
