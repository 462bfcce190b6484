import type { z } from 'zod';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { PreProcessor } from '../../src/contracts/pre-processor.ts';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import { AxonError } from '../../src/errors.ts';

/** The extension points a configuration can name components for. */
export interface ComponentKinds {
  embeddings: EmbeddingsProvider;
  chat: ChatProvider;
  store: VectorStore;
  'pre-processor': PreProcessor;
  'post-processor': PostProcessor;
}

export type ComponentKind = keyof ComponentKinds;

/** What a component may need from the rest of the pipeline when it is built from configuration. */
export interface ComponentDependencies {
  /** The pipeline's chat model, when the configuration has one. */
  chat: ChatProvider | undefined;
  /** The pipeline's embeddings provider (not available to the embeddings entry itself). */
  embeddings: EmbeddingsProvider | undefined;
  /** Relative paths in the configuration are resolved from here (the config file's folder, or the working directory). */
  baseDirectory: string;
}

/**
 * How to build one named component from configuration: the options schema (the entry without its
 * `type`/`provider` key) and a factory. The schema's problems are reported with their paths.
 */
export interface ComponentDefinition<Kind extends ComponentKind = ComponentKind, Schema extends z.ZodType = z.ZodType> {
  kind: Kind;
  /** The name used in configuration: `{ "type": "<name>" }` (`"provider"` for embeddings and chat). */
  name: string;
  /** One line for `axon --help`-style listings and error messages. */
  description?: string;
  options: Schema;
  /** Names of pipeline parts the component cannot work without; reported as a configuration problem when missing. */
  requires?: ReadonlyArray<'chat'>;
  create(options: z.output<Schema>, dependencies: ComponentDependencies): ComponentKinds[Kind];
}

/**
 * A component whose schema and factory live in a module loaded only when a configuration names it: the
 * built-ins are registered this way, so building a pipeline loads the adapters it uses and no others.
 * `load` is called at most once per registry (a failure is reported as a configuration problem and retried on the
 * next call).
 */
export interface LazyComponentDefinition<Kind extends ComponentKind = ComponentKind> {
  kind: Kind;
  name: string;
  description?: string;
  requires?: ReadonlyArray<'chat'>;
  load(): Promise<ComponentImplementation<Kind>>;
}

/** What a lazily registered component's module provides: its options schema and factory. */
export interface ComponentImplementation<Kind extends ComponentKind = ComponentKind, Schema extends z.ZodType = z.ZodType> {
  options: Schema;
  create(options: z.output<Schema>, dependencies: ComponentDependencies): ComponentKinds[Kind];
}

/** Declare a lazily loaded component's schema and factory with the option types inferred from the schema. */
export function componentImplementation<Kind extends ComponentKind, Schema extends z.ZodType>(
  _kind: Kind,
  implementation: ComponentImplementation<Kind, Schema>,
): ComponentImplementation<Kind> {
  return implementation as unknown as ComponentImplementation<Kind>;
}

/** Declare a component definition with its option types inferred from the schema. */
export function defineComponent<Kind extends ComponentKind, Schema extends z.ZodType>(
  definition: ComponentDefinition<Kind, Schema>,
): ComponentDefinition<Kind, Schema> {
  return definition;
}

/** The inversify service identifier a definition is bound under (in the container `createRag` builds). */
export function componentIdentifier(kind: ComponentKind, name: string): string {
  return `axon:${kind}:${name}`;
}

/**
 * The names a configuration may use, bound in an inversify container. Built-ins are registered by
 * `createRegistry()`; register your own classes under new names and refer to them from configuration.
 *
 * @example
 * const registry = createRegistry();
 * registry.register(defineComponent({
 *   kind: 'post-processor', name: 'source-policy',
 *   options: z.object({ blocked: z.array(z.string()) }).strict(),
 *   create: (options) => new SourcePolicy(options),
 * }));
 * const rag = await createRag({ postProcessors: [{ type: 'source-policy', blocked: ['internal/'] }] }, { registry });
 *
 * The registry is a plain table, so building one costs nothing; `createRag` binds its definitions in an
 * inversify container, which is loaded (with `inversify` itself) only then.
 */
export class ComponentRegistry {
  private readonly definitions = new Map<string, ComponentDefinition<ComponentKind, z.ZodType> | LazyComponentDefinition>();
  private readonly names = new Map<ComponentKind, Set<string>>();
  private readonly loading = new Map<LazyComponentDefinition, Promise<ComponentDefinition<ComponentKind, z.ZodType>>>();

  /**
   * Make a component available under its name. Registering a name twice is an error unless `replace` is set,
   * so a typo cannot silently shadow a built-in.
   */
  register(definition: ComponentDefinition<ComponentKind, z.ZodType> | LazyComponentDefinition, options: { replace?: boolean } = {}): this {
    if (!definition || typeof definition.name !== 'string' || !/^[a-z][a-z0-9-]*$/.test(definition.name)) {
      throw new AxonError('INVALID_INPUT', `Component names are lower-case kebab-case, got ${JSON.stringify(definition?.name)}.`, {
        component: 'config',
        fix: 'Name it like "source-policy".',
        details: { argument: 'definition.name' },
      });
    }
    const identifier = componentIdentifier(definition.kind, definition.name);
    if (this.definitions.has(identifier)) {
      if (!options.replace) {
        throw new AxonError('INVALID_INPUT', `A ${definition.kind} named "${definition.name}" is already registered.`, {
          component: 'config',
          fix: 'Choose another name, or pass { replace: true } to override it.',
          details: { argument: 'definition.name' },
        });
      }
    }
    this.definitions.set(identifier, definition);
    let names = this.names.get(definition.kind);
    if (!names) this.names.set(definition.kind, (names = new Set()));
    names.add(definition.name);
    return this;
  }

  /**
   * The definition registered under a name, if any, with a lazily registered component's module loaded.
   *
   * @throws AxonError `DEPENDENCY_MISSING` when a lazily registered component's module cannot be loaded.
   */
  async get<Kind extends ComponentKind>(kind: Kind, name: string): Promise<ComponentDefinition<Kind, z.ZodType> | undefined> {
    const identifier = componentIdentifier(kind, name);
    const definition = this.definitions.get(identifier);
    if (definition === undefined || !('load' in definition)) return definition as ComponentDefinition<Kind, z.ZodType> | undefined;
    // Calls made while the module loads share that one load.
    let pending = this.loading.get(definition);
    if (pending === undefined) {
      pending = this.loadDefinition(definition).finally(() => this.loading.delete(definition));
      this.loading.set(definition, pending);
    }
    const loaded = await pending;
    // Another registration under the name since the load started wins.
    if (this.definitions.get(identifier) === definition) this.definitions.set(identifier, loaded);
    return loaded as ComponentDefinition<Kind, z.ZodType>;
  }

  private async loadDefinition(definition: LazyComponentDefinition): Promise<ComponentDefinition<ComponentKind, z.ZodType>> {
    let implementation: ComponentImplementation;
    try {
      implementation = await definition.load();
    } catch (error) {
      throw new AxonError('DEPENDENCY_MISSING', `The ${definition.kind} "${definition.name}" could not be loaded: ${(error as Error).message}`, {
        component: 'config',
        fix: 'Reinstall axon-rag (npm ci); a component registered with load() must resolve to { options, create }.',
        cause: error,
        details: { kind: definition.kind, name: definition.name },
      });
    }
    const { load: _load, ...described } = definition;
    return { ...described, options: implementation.options, create: implementation.create } as ComponentDefinition<ComponentKind, z.ZodType>;
  }

  /** Every registered definition (lazily registered ones as registered), for the container `createRag` builds. */
  entries(): Array<[identifier: string, definition: ComponentDefinition<ComponentKind, z.ZodType> | LazyComponentDefinition]> {
    return [...this.definitions];
  }

  /** Every registered name of a kind, sorted. */
  list(kind: ComponentKind): string[] {
    return [...(this.names.get(kind) ?? [])].sort();
  }
}
