import { AxonError } from '../errors.ts';

/**
 * A module loaded on first use and kept: adapters import their SDK through one of these, so importing
 * `axon-rag/providers` or `axon-rag/stores` costs nothing for the SDKs an application does not use.
 * `loaded()` gives the module once some call has loaded it (error mapping needs the SDK's error classes,
 * and an SDK error can only exist after the SDK was loaded).
 */
export interface LazyModule<Module> {
  load(): Promise<Module>;
  loaded(): Module | undefined;
}

/**
 * @param packageName Named in the error when the package cannot be loaded (e.g. not installed).
 * @param component The adapter that needs it, named in the error.
 * @param importer `() => import('pkg')`, written at the call site so bundlers see a literal specifier.
 */
export function lazyModule<Module>(packageName: string, component: string, importer: () => Promise<Module>): LazyModule<Module> {
  let module: Module | undefined;
  let pending: Promise<Module> | undefined;
  return {
    load() {
      if (module !== undefined) return Promise.resolve(module);
      pending ??= importer().then(
        (value) => (module = value),
        (error: unknown) => {
          pending = undefined;
          throw new AxonError('DEPENDENCY_MISSING', `Cannot load the package "${packageName}" (${(error as Error)?.message ?? String(error)}).`, {
            component,
            fix: `Install it in your application: npm install ${packageName}`,
            cause: error,
          });
        },
      );
      return pending;
    },
    loaded: () => module,
  };
}
