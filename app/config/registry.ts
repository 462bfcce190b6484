import type { z } from 'zod';
import type { ComponentDefinition, ComponentImplementation, ComponentKind, ComponentPart, LazyComponentDefinition } from '../../src/contracts/component.ts';
import { AxonError } from '../../src/errors.ts';

export {
  componentClass,
  componentImplementation,
  defineComponent,
  type ComponentDefinition,
  type ComponentDependencies,
  type ComponentImplementation,
  type ComponentKind,
  type ComponentKinds,
  type ComponentPart,
  type LazyComponentDefinition,
} from '../../src/contracts/component.ts';

/** The parts a definition may declare in `requires` and `uses`. */
export const COMPONENT_PARTS: readonly ComponentPart[] = ['chat', 'embeddings', 'store'];

/** The inversify service identifier a definition is bound under (in the container `createRag` builds). */
export function componentIdentifier(kind: ComponentKind, name: string): string {
  return `axon:${kind}:${name}`;
}

/**
 * The names a configuration may use. Built-ins are registered by `createRegistry()`; register your own classes
 * under new names (or replace a built-in by its name) and refer to them from configuration.
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
 * The registry is a plain table, so building one costs nothing. `createRag` binds the definitions a configuration
 * names in an inversify container of its own (one per call), each with the parts it declares (`requires`, `uses`),
 * and resolves the pipeline from it; the container is loaded (with `inversify` itself) only then.
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
    for (const part of [...(definition.requires ?? []), ...(definition.uses ?? [])]) {
      if (!(COMPONENT_PARTS as readonly unknown[]).includes(part)) {
        throw new AxonError('INVALID_INPUT', `The ${definition.kind} "${definition.name}" declares an unknown part ${JSON.stringify(part)}.`, {
          component: 'config',
          fix: `Declare parts among ${COMPONENT_PARTS.join(', ')} in requires or uses.`,
          details: { argument: 'definition.requires' },
        });
      }
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

  /** Every registered definition (lazily registered ones as registered). */
  entries(): Array<[identifier: string, definition: ComponentDefinition<ComponentKind, z.ZodType> | LazyComponentDefinition]> {
    return [...this.definitions];
  }

  /** Every registered name of a kind, sorted. */
  list(kind: ComponentKind): string[] {
    return [...(this.names.get(kind) ?? [])].sort();
  }
}
