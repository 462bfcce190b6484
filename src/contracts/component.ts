import type { z } from 'zod';
import type { ChatHistory } from './chat-history.ts';
import type { ChatProvider } from './chat.ts';
import type { EmbeddingsProvider } from './embeddings.ts';
import type { PostProcessor } from './post-processor.ts';
import type { PreProcessor } from './pre-processor.ts';
import type { VectorStore } from './vector-store.ts';

/**
 * How an adapter declares itself to configuration: the name a configuration uses, its options schema, the
 * pipeline parts it needs, and its factory. Each adapter family lists its definitions beside its adapters
 * (`providers/components.ts`, `stores/components.ts`, `processors/components.ts`); the composition root
 * (`axon-rag/config`) registers them and builds what a configuration names in a container.
 */

/** The extension points a configuration can name components for. */
export interface ComponentKinds {
  embeddings: EmbeddingsProvider;
  chat: ChatProvider;
  store: VectorStore;
  'pre-processor': PreProcessor;
  'post-processor': PostProcessor;
  /** Where conversations are kept (`conversations.history`). */
  'chat-history': ChatHistory;
}

export type ComponentKind = keyof ComponentKinds;

/** The pipeline parts a component can be given, each built once per pipeline and shared. */
export type ComponentPart = 'chat' | 'embeddings' | 'store';

/**
 * What a component is given when it is built from configuration: the parts its definition declares in
 * `requires` or `uses`, and the folder relative paths are resolved from. Reading a part the definition did not
 * declare is a configuration error that says to declare it: the container builds what is declared, in order.
 */
export interface ComponentDependencies {
  /** The pipeline's chat model: declare `requires: ['chat']`, or `uses: ['chat']` when it may be absent. */
  chat: ChatProvider | undefined;
  /** The pipeline's embeddings provider (`requires: ['embeddings']`). */
  embeddings: EmbeddingsProvider | undefined;
  /** The pipeline's vector store (`requires: ['store']`), e.g. for a post-processor that reads whole documents. */
  store: VectorStore | undefined;
  /** Relative paths in the configuration are resolved from here (the config file's folder, or the working directory). */
  baseDirectory: string;
}

/** What every definition says about itself, whether its factory is at hand or loaded on first use. */
interface ComponentDescription<Kind extends ComponentKind> {
  kind: Kind;
  /** The name used in configuration: `{ "type": "<name>" }` (`"provider"` for embeddings and chat). Lower-case kebab-case. */
  name: string;
  /** One line for listings and error messages. */
  description?: string;
  /**
   * Parts the component cannot work without. Each is built first and given to the factory; one the configuration
   * lacks (a chat model) is reported as a configuration problem at the entry.
   */
  requires?: readonly ComponentPart[];
  /** Parts the component is given when the pipeline has them, and works without. */
  uses?: readonly ComponentPart[];
}

/**
 * How to build one named component from configuration: the options schema (the entry without its
 * `type`/`provider` key) and a factory. The schema's problems are reported with their paths.
 */
export interface ComponentDefinition<Kind extends ComponentKind = ComponentKind, Schema extends z.ZodType = z.ZodType> extends ComponentDescription<Kind> {
  options: Schema;
  create(options: z.output<Schema>, dependencies: ComponentDependencies): ComponentKinds[Kind];
}

/**
 * A component whose schema and factory live in a module loaded only when a configuration names it: the
 * built-ins are declared this way, so building a pipeline loads the adapters it uses and no others.
 */
export interface LazyComponentDefinition<Kind extends ComponentKind = ComponentKind> extends ComponentDescription<Kind> {
  /** Import the component's module and return its schema and factory. Called at most once per registry. */
  load(): Promise<ComponentImplementation<Kind>>;
}

/** What a lazily declared component's module provides: its options schema and factory. */
export interface ComponentImplementation<Kind extends ComponentKind = ComponentKind, Schema extends z.ZodType = z.ZodType> {
  options: Schema;
  create(options: z.output<Schema>, dependencies: ComponentDependencies): ComponentKinds[Kind];
}

/** Declare a component definition with its option types inferred from the schema. */
export function defineComponent<Kind extends ComponentKind, Schema extends z.ZodType>(
  definition: ComponentDefinition<Kind, Schema>,
): ComponentDefinition<Kind, Schema> {
  return definition;
}

/** Declare a lazily loaded component's schema and factory with the option types inferred from the schema. */
export function componentImplementation<Kind extends ComponentKind, Schema extends z.ZodType>(
  _kind: Kind,
  implementation: ComponentImplementation<Kind, Schema>,
): ComponentImplementation<Kind> {
  return implementation as unknown as ComponentImplementation<Kind>;
}

/**
 * The implementation of a component built as `new Class(options)` from its validated options: what most
 * adapters are.
 *
 * @example load: () => import('./post/top-n.ts').then((module) => componentClass('post-processor', module.TopN, module.topNOptionsSchema))
 */
export function componentClass<Kind extends ComponentKind, Schema extends z.ZodType>(
  kind: Kind,
  Class: new (options: z.output<Schema>) => ComponentKinds[Kind],
  options: Schema,
): ComponentImplementation<Kind> {
  return componentImplementation(kind, { options, create: (parsed) => new Class(parsed) });
}
