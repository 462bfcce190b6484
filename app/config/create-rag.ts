import type { ChatHistory } from '../../src/contracts/chat-history.ts';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { PreProcessor } from '../../src/contracts/pre-processor.ts';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import { supportsKeywordSearch } from '../../src/contracts/keyword-search.ts';
import { ConfigError, type ConfigIssue } from '../../src/errors.ts';
import type { PriceTable } from '../../src/pipeline/usage.ts';
import { RAG, type HybridWeights, type SearchMode } from '../../src/rag.ts';
import { describeOptionIssues, didYouMean } from '../../src/runtime/closest-name.ts';
import { describeUnsetVariable } from '../../src/runtime/secret.ts';
import { createRegistry } from './built-ins.ts';
import { configuredEmbeddingCache, withEmbeddingCache } from './embedding-cache.ts';
import {
  COMPONENT_PARTS,
  componentIdentifier,
  type ComponentDefinition,
  type ComponentDependencies,
  type ComponentKind,
  type ComponentKinds,
  type ComponentPart,
  type ComponentRegistry,
} from './registry.ts';
import type { z } from 'zod';
import { pipelineConfigSchema, type ParsedPipelineConfig, type PipelineConfig } from './schema.ts';

/** The parts a configuration resolved to, injected into `ConfiguredRAG`. */
export interface PipelineParts {
  embeddings: EmbeddingsProvider;
  store: VectorStore;
  chat: ChatProvider | undefined;
  preProcessors: PreProcessor[];
  postProcessors: PostProcessor[];
  instructions: string | undefined;
  /** The default search mode, when configured (else `RAG.searchMode()`'s). */
  searchMode?: SearchMode;
  /** The hybrid fusion weights, when configured (else `RAG.hybridWeights()`'s: BM25-led with lexical embeddings). */
  hybridWeights?: HybridWeights;
  /** Where conversations are kept, when configured (`conversations.history`; else `RAG.chatHistory()`'s: in memory). */
  chatHistory?: ChatHistory;
  /** What usage costs, when configured (`prices`). */
  prices?: PriceTable;
}

/**
 * A `RAG` whose parts come from a configuration. Built by `createRag`. The container builds it through a
 * factory binding rather than decorators, so nothing in an application's build needs `experimentalDecorators`
 * or `emitDecoratorMetadata`.
 */
export class ConfiguredRAG extends RAG {
  private readonly parts: PipelineParts;
  constructor(parts: PipelineParts) {
    super();
    this.parts = parts;
  }
  protected embeddings(): EmbeddingsProvider {
    return this.parts.embeddings;
  }
  protected vectorStore(): VectorStore {
    return this.parts.store;
  }
  protected chat(): ChatProvider | undefined {
    return this.parts.chat;
  }
  protected preProcessors(): PreProcessor[] {
    return this.parts.preProcessors;
  }
  protected postProcessors(): PostProcessor[] {
    return this.parts.postProcessors;
  }
  protected instructions(): string {
    return this.parts.instructions ?? super.instructions();
  }
  protected searchMode(): SearchMode {
    return this.parts.searchMode ?? super.searchMode();
  }
  protected hybridWeights(): HybridWeights {
    return this.parts.hybridWeights ?? super.hybridWeights();
  }
  protected chatHistory(): ChatHistory | undefined {
    return this.parts.chatHistory ?? super.chatHistory();
  }
  protected prices(): PriceTable | undefined {
    return this.parts.prices;
  }
  /** The configuration's price table (`prices`), as its schema checked it; `undefined` without one. */
  get priceTable(): PriceTable | undefined {
    return this.parts.prices;
  }
}

export interface CreateRagOptions {
  /** Where your own components are registered. @default createRegistry() (the built-ins only) */
  registry?: ComponentRegistry;
  /** Relative paths in the configuration are resolved from here. @default process.cwd() */
  baseDirectory?: string;
  /** Where environment references (`{ "env": "NAME" }`) are read. @default process.env */
  environment?: Record<string, string | undefined>;
  /** Named in error messages, e.g. the config file's path. */
  source?: string;
}

/**
 * Build a working `RAG` from a configuration object, through an inversify container of this call's own: each
 * configured component is bound with the pipeline parts its definition declares (`requires`, `uses`), and
 * resolving the RAG builds every part once, dependencies first. Every problem in the configuration (unknown
 * names, bad options, missing environment variables, a processor that needs a chat model when none is
 * configured, parts that need each other) is collected and reported at once, before any component is built.
 * Asynchronous because the container (`inversify`) and the named components' modules are loaded on the first
 * call, not when `axon-rag/config` is imported.
 *
 * @example const rag = await createRag({ store: { type: 'file', directory: '.axon' } });
 * @throws ConfigError listing every problem with its path, e.g. `postProcessors[1].multiplier: must be ≥ 0`.
 */
export async function createRag(config: PipelineConfig | unknown, options: CreateRagOptions = {}): Promise<ConfiguredRAG> {
  const registry = options.registry ?? createRegistry();
  const environment = options.environment ?? process.env;
  const baseDirectory = options.baseDirectory ?? process.cwd();
  const issues: ConfigIssue[] = [];

  const parsed = pipelineConfigSchema.safeParse(config);
  if (!parsed.success) {
    for (const issue of describeOptionIssues(pipelineConfigSchema, parsed.error))
      issues.push({ path: formatPath(issue.path), code: issue.code, message: issue.message });
    // Go on into the sections that are well formed, so their own problems are reported in the same error.
    const sections = wellFormedSections(config);
    validateSections(await namedDefinitions(registry, sections, issues), sections, environment, issues);
    throw new ConfigError(issues, { source: options.source });
  }
  const pipeline: ParsedPipelineConfig = parsed.data;

  // Validate every entry, so all problems are reported together. Only the components the configuration names
  // are loaded (with their SDKs, on first use).
  const named: PipelineSections = { ...pipeline, chatHistory: historyEntry(pipeline.conversations?.history) };
  const sections = validateSections(await namedDefinitions(registry, named, issues), named, environment, issues);
  checkPartCycles(sections, issues);
  if (issues.length > 0) throw new ConfigError(issues, { source: options.source });

  // Build through a container of this call's own: each configured component is bound with the parts it declares,
  // and resolving the RAG builds every part once, dependencies first.
  const { Container } = await inversify.load();
  const container = new Container({ defaultScope: 'Singleton' });
  const bindEntry = <Kind extends ComponentKind>(
    identifier: string,
    entry: ValidatedEntry<Kind>,
    path: string,
    finish: (built: ComponentKinds[Kind]) => ComponentKinds[Kind] = (built) => built,
  ) => {
    const parts = declaredParts(entry.definition);
    container.bind<ComponentKinds[Kind]>(identifier).toResolvedValue(
      (...resolved: unknown[]) => finish(buildEntry(entry, path, dependenciesOf(entry.definition, parts, resolved, baseDirectory, path), options.source)),
      parts.map((part) => (part === 'chat' ? { serviceIdentifier: PART_IDENTIFIERS.chat, optional: true } : PART_IDENTIFIERS[part])),
    );
  };
  // Every entry is validated here (issues would have been thrown otherwise).
  // The embedding cache goes in front of the provider, so every component that embeds is given the cached one.
  const cacheSetting = configuredEmbeddingCache(pipeline, baseDirectory);
  bindEntry(PART_IDENTIFIERS.embeddings, sections.embeddings!, 'embeddings', (provider) => {
    if (pipeline.embeddingCache !== undefined && cacheSetting !== false && provider.identity === undefined) {
      const message = `"${provider.name}" does not declare its identity (the model that makes its vectors), so its vectors cannot be cached safely; remove embeddingCache or set it to false`;
      throw new ConfigError([{ path: 'embeddingCache', code: 'incompatible', message }], { source: options.source });
    }
    return withEmbeddingCache(provider, cacheSetting, baseDirectory);
  });
  if (sections.chat) bindEntry(PART_IDENTIFIERS.chat, sections.chat, 'chat');
  bindEntry(PART_IDENTIFIERS.store, sections.store!, 'store');
  const preIdentifiers = sections.pre.map((entry, index) => {
    bindEntry(`axon:pre-processors[${index}]`, entry!, `preProcessors[${index}]`);
    return `axon:pre-processors[${index}]`;
  });
  const postIdentifiers = sections.post.map((entry, index) => {
    bindEntry(`axon:post-processors[${index}]`, entry!, `postProcessors[${index}]`);
    return `axon:post-processors[${index}]`;
  });
  if (sections.chatHistory) bindEntry(CHAT_HISTORY_IDENTIFIER, sections.chatHistory, 'conversations.history');
  container.bind(ConfiguredRAG).toResolvedValue(
    (embeddings: EmbeddingsProvider, store: VectorStore, chat: ChatProvider | undefined, chatHistory: ChatHistory | undefined, ...processors: unknown[]) => {
      // Unset, RAG's own defaults apply (hybrid with a keyword index; BM25-led weights with lexical embeddings).
      if (pipeline.searchMode !== undefined && pipeline.searchMode !== 'vector' && !supportsKeywordSearch(store)) {
        const message = `"${pipeline.searchMode}" needs a store with a keyword index; the "${pipeline.store.type}" store has none (use the file, memory or pgvector store, with keywordIndex on, or "vector")`;
        throw new ConfigError([{ path: 'searchMode', code: 'incompatible', message }], { source: options.source });
      }
      return new ConfiguredRAG({
        embeddings,
        store,
        chat,
        preProcessors: processors.slice(0, preIdentifiers.length) as PreProcessor[],
        postProcessors: processors.slice(preIdentifiers.length) as PostProcessor[],
        instructions: pipeline.instructions,
        searchMode: pipeline.searchMode,
        hybridWeights: pipeline.hybridWeights,
        ...(chatHistory ? { chatHistory } : {}),
        prices: pipeline.prices,
      });
    },
    [
      PART_IDENTIFIERS.embeddings,
      PART_IDENTIFIERS.store,
      { serviceIdentifier: PART_IDENTIFIERS.chat, optional: true },
      { serviceIdentifier: CHAT_HISTORY_IDENTIFIER, optional: true },
      ...preIdentifiers,
      ...postIdentifiers,
    ],
  );
  return container.get(ConfiguredRAG);
}

// --- Internal helpers ---

/**
 * The container, loaded on the first `createRag`. The package build bundles inversify into the chunk this
 * import becomes (scripts/build.mjs), so an application loads one file for it, not inversify's 246.
 */
let container: Promise<typeof import('inversify')> | undefined;
const inversify = { load: () => (container ??= import('inversify')) };

/** Where the configured chat history is bound, in the container of one `createRag` call. */
const CHAT_HISTORY_IDENTIFIER = 'axon:chat-history';

/** The service identifiers the pipeline's shared parts are bound under, in the container of one `createRag` call. */
const PART_IDENTIFIERS: Record<ComponentPart, string> = { chat: 'axon:chat', embeddings: 'axon:embeddings', store: 'axon:store' };

/** The parts a definition declares, required first: what the container resolves for it, in this order. */
function declaredParts(definition: { requires?: readonly ComponentPart[]; uses?: readonly ComponentPart[] }): ComponentPart[] {
  return [...new Set([...(definition.requires ?? []), ...(definition.uses ?? [])])];
}

/**
 * What a component's factory is given: the parts it declared, resolved by the container, and the base folder.
 * Reading a part it did not declare throws, so a factory cannot depend on a part the container was not told of.
 */
function dependenciesOf(
  definition: ComponentDefinition<ComponentKind, z.ZodType>,
  parts: readonly ComponentPart[],
  resolved: readonly unknown[],
  baseDirectory: string,
  path: string,
): ComponentDependencies {
  const dependencies = { baseDirectory } as ComponentDependencies;
  for (const part of COMPONENT_PARTS) {
    const position = parts.indexOf(part);
    Object.defineProperty(dependencies, part, {
      enumerable: true,
      get() {
        if (position >= 0) return resolved[position];
        throw new ConfigError([
          {
            path: `${path}.${definition.kind === 'embeddings' || definition.kind === 'chat' ? 'provider' : 'type'}`,
            code: 'plugin_invalid',
            message: `the ${definition.kind} "${definition.name}" reads the pipeline's ${part} without declaring it: add ${part === 'chat' ? `requires: ['chat'] (or uses: ['chat'] when it works without one)` : `requires: ['${part}']`} to its definition`,
          },
        ]);
      },
    });
  }
  return dependencies;
}

/** Build one validated entry; a `ConfigError` from its factory is reported at the entry's path. */
function buildEntry<Kind extends ComponentKind>(
  entry: ValidatedEntry<Kind>,
  path: string,
  dependencies: ComponentDependencies,
  source: string | undefined,
): ComponentKinds[Kind] {
  try {
    return entry.definition.create(entry.options, dependencies) as ComponentKinds[Kind];
  } catch (error) {
    if (error instanceof ConfigError && !error.issues.every((issue) => issue.path.startsWith(`${path}.`))) {
      throw new ConfigError(
        error.issues.map((issue) => ({ ...issue, path: `${path}${issue.path ? `.${issue.path}` : ''}` })),
        { source },
      );
    }
    throw error;
  }
}

/**
 * Parts that need each other (a store that requires the embeddings whose definition requires the store) cannot be
 * built: each such cycle is a problem at the entry that starts it, reported before anything is built.
 */
function checkPartCycles(sections: ReturnType<typeof validateSections>, issues: ConfigIssue[]): void {
  const entries: Partial<Record<ComponentPart, { definition: { requires?: readonly ComponentPart[]; uses?: readonly ComponentPart[] }; path: string }>> = {};
  if (sections.embeddings) entries.embeddings = { definition: sections.embeddings.definition, path: 'embeddings.provider' };
  if (sections.chat) entries.chat = { definition: sections.chat.definition, path: 'chat.provider' };
  if (sections.store) entries.store = { definition: sections.store.definition, path: 'store.type' };
  const reported = new Set<ComponentPart>();
  for (const start of COMPONENT_PARTS) {
    const cycle = findCycle(start, [start], entries);
    if (cycle === undefined || cycle.some((part) => reported.has(part))) continue;
    for (const part of cycle) reported.add(part);
    issues.push({
      path: entries[start]!.path,
      code: 'dependency_cycle',
      message: `the parts need each other, so none can be built first: ${[...cycle, start].join(' → ')}`,
    });
  }
}

function findCycle(
  start: ComponentPart,
  trail: ComponentPart[],
  entries: Partial<Record<ComponentPart, { definition: { requires?: readonly ComponentPart[]; uses?: readonly ComponentPart[] } }>>,
): ComponentPart[] | undefined {
  const current = trail[trail.length - 1];
  for (const next of declaredParts(entries[current]?.definition ?? {})) {
    if (entries[next] === undefined) continue;
    if (next === start) return trail;
    if (trail.includes(next)) continue;
    const found = findCycle(start, [...trail, next], entries);
    if (found) return found;
  }
  return undefined;
}

/** The sections of a pipeline configuration, each entry `undefined` where it is malformed (it is reported by the root schema). */
interface PipelineSections {
  embeddings?: Record<string, unknown>;
  chat?: Record<string, unknown>;
  store?: Record<string, unknown>;
  preProcessors?: (Record<string, unknown> | undefined)[];
  postProcessors?: (Record<string, unknown> | undefined)[];
  /** `conversations.history` as an entry (`"file"` is `{ "type": "file" }`). */
  chatHistory?: Record<string, unknown>;
  /** A chat section is present, well formed or not (a malformed one is not also "missing"). */
  chatGiven?: boolean;
}

/** The sections of a configuration the root schema rejected that are well formed on their own. */
function wellFormedSections(config: unknown): PipelineSections {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return {};
  const { shape } = pipelineConfigSchema;
  const section = <Key extends 'embeddings' | 'chat' | 'store'>(key: Key) => {
    const result = shape[key].safeParse((config as Record<string, unknown>)[key]);
    return result.success ? (result.data as Record<string, unknown> | undefined) : undefined;
  };
  const list = (key: 'preProcessors' | 'postProcessors') => {
    const value = (config as Record<string, unknown>)[key];
    if (!Array.isArray(value)) return [];
    return value.map((entry) => {
      const result = shape[key].unwrap().element.safeParse(entry);
      return result.success ? result.data : undefined;
    });
  };
  const conversations = shape.conversations.safeParse((config as Record<string, unknown>).conversations);
  return {
    embeddings: section('embeddings'),
    chat: section('chat'),
    store: section('store'),
    preProcessors: list('preProcessors'),
    postProcessors: list('postProcessors'),
    chatHistory: conversations.success ? historyEntry(conversations.data?.history) : undefined,
    chatGiven: (config as Record<string, unknown>).chat !== undefined,
  };
}

/** The definitions a configuration names, loaded; every registered name of each kind, for "did you mean". */
interface NamedDefinitions {
  get<Kind extends ComponentKind>(kind: Kind, name: string): ComponentDefinition<Kind, z.ZodType> | undefined;
  /** A registered component whose module failed to load (already reported at its path, not also as unknown). */
  unloadable(kind: ComponentKind, name: string): boolean;
  list(kind: ComponentKind): string[];
}

/** Load the definitions of the components the sections name (a module that fails to load is a problem at its path). */
async function namedDefinitions(registry: ComponentRegistry, sections: PipelineSections, issues: ConfigIssue[]): Promise<NamedDefinitions> {
  const wanted: Array<[kind: ComponentKind, name: unknown, path: string]> = [
    ['embeddings', sections.embeddings?.provider, 'embeddings.provider'],
    ['chat', sections.chat?.provider, 'chat.provider'],
    ['store', sections.store?.type, 'store.type'],
    ...(sections.preProcessors ?? []).map((entry, index) => ['pre-processor', entry?.type, `preProcessors[${index}].type`] as [ComponentKind, unknown, string]),
    ...(sections.postProcessors ?? []).map(
      (entry, index) => ['post-processor', entry?.type, `postProcessors[${index}].type`] as [ComponentKind, unknown, string],
    ),
    ['chat-history', sections.chatHistory?.type, 'conversations.history.type'],
  ];
  const loaded = new Map<string, ComponentDefinition<ComponentKind, z.ZodType>>();
  const unloadable = new Set<string>();
  for (const [kind, name, path] of wanted) {
    if (typeof name !== 'string') continue;
    const identifier = componentIdentifier(kind, name);
    if (loaded.has(identifier) || unloadable.has(identifier)) continue;
    try {
      const definition = await registry.get(kind, name);
      if (definition) loaded.set(identifier, definition);
    } catch (error) {
      issues.push({ path, code: 'unavailable', message: (error as Error).message });
      unloadable.add(identifier);
    }
  }
  return {
    get: <Kind extends ComponentKind>(kind: Kind, name: string) =>
      loaded.get(componentIdentifier(kind, name)) as ComponentDefinition<Kind, z.ZodType> | undefined,
    unloadable: (kind, name) => unloadable.has(componentIdentifier(kind, name)),
    list: (kind) => registry.list(kind),
  };
}

/** Validate every entry of every section against its component's own schema, collecting the problems. */
function validateSections(registry: NamedDefinitions, sections: PipelineSections, environment: Record<string, string | undefined>, issues: ConfigIssue[]) {
  const embeddings = sections.embeddings && validateEntry(registry, 'embeddings', sections.embeddings, 'provider', 'embeddings', environment, issues);
  const chat = sections.chat && validateEntry(registry, 'chat', sections.chat, 'provider', 'chat', environment, issues);
  const store = sections.store && validateEntry(registry, 'store', sections.store, 'type', 'store', environment, issues);
  const pre = (sections.preProcessors ?? []).map(
    (entry, index) => entry && validateEntry(registry, 'pre-processor', entry, 'type', `preProcessors[${index}]`, environment, issues),
  );
  const post = (sections.postProcessors ?? []).map(
    (entry, index) => entry && validateEntry(registry, 'post-processor', entry, 'type', `postProcessors[${index}]`, environment, issues),
  );
  for (const [entry, path] of [
    ...pre.map((entry, index) => [entry, `preProcessors[${index}]`] as const),
    ...post.map((entry, index) => [entry, `postProcessors[${index}]`] as const),
  ]) {
    // The other parts always exist (embeddings and store have defaults); a chat model only when configured.
    if (entry?.definition.requires?.includes('chat') && sections.chat === undefined && !sections.chatGiven) {
      issues.push({
        path: `${path}.type`,
        code: 'missing_part',
        message: `"${entry.definition.name}" needs a chat model: add a "chat" section (e.g. { "provider": "openai", "model": "gpt-4o-mini" })`,
      });
    }
  }
  const chatHistory =
    sections.chatHistory && validateEntry(registry, 'chat-history', sections.chatHistory, 'type', 'conversations.history', environment, issues);
  return { embeddings, chat, store, pre, post, chatHistory };
}

/** `conversations.history` as an entry: a bare name is the entry of that type with no options. */
function historyEntry(history: string | Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return typeof history === 'string' ? { type: history } : history;
}

interface ValidatedEntry<Kind extends ComponentKind> {
  definition: ComponentDefinition<ComponentKind, z.ZodType> & { kind: Kind };
  options: unknown;
}

function validateEntry<Kind extends ComponentKind>(
  registry: NamedDefinitions,
  kind: Kind,
  entry: Record<string, unknown>,
  key: 'type' | 'provider',
  path: string,
  environment: Record<string, string | undefined>,
  issues: ConfigIssue[],
): ValidatedEntry<Kind> | undefined {
  const { [key]: name, ...rest } = entry;
  if (registry.unloadable(kind, String(name))) return undefined;
  const definition = registry.get(kind, String(name));
  if (!definition) {
    issues.push({
      path: `${path}.${key}`,
      code: 'unknown_component',
      message: `unknown ${kind} "${String(name)}"${didYouMean(String(name), registry.list(kind))}; registered: ${registry.list(kind).join(', ') || 'none'}`,
    });
    return undefined;
  }
  const resolved = resolveEnvironmentReferences(rest, path, environment, issues);
  const parsed = definition.options.safeParse(resolved);
  if (!parsed.success) {
    for (const issue of describeOptionIssues(definition.options, parsed.error))
      issues.push({ path: `${path}${issue.path.length ? `.${formatPath(issue.path)}` : ''}`, code: issue.code, message: issue.message });
    return undefined;
  }
  return { definition: definition as ValidatedEntry<Kind>['definition'], options: parsed.data };
}

/** Replace every `{ "env": "NAME" }` with the variable's value; a variable that is not set is a problem at its path. */
function resolveEnvironmentReferences(value: unknown, path: string, environment: Record<string, string | undefined>, issues: ConfigIssue[]): unknown {
  if (Array.isArray(value)) return value.map((item, index) => resolveEnvironmentReferences(item, `${path}[${index}]`, environment, issues));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0][0] === 'env' && typeof entries[0][1] === 'string') {
    const variable = entries[0][1];
    const found = environment[variable];
    if (found === undefined || found === '') {
      issues.push({ path, code: 'missing_variable', message: describeUnsetVariable(variable, 'env') });
      return undefined;
    }
    return found;
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, resolveEnvironmentReferences(item, `${path}.${key}`, environment, issues)]));
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part)), '');
}
