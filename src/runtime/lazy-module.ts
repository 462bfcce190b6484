import { AxonError } from '../errors.ts';

/**
 * A module loaded on first use and kept: adapters import their SDK or client library through one of these, so
 * importing `axon-rag/providers` or `axon-rag/stores` costs nothing for the packages an application does not use.
 * The services' packages (`openai`, `pg`, `@qdrant/js-client-rest`) are optional peer dependencies of Axon: an
 * application installs the ones it uses, and one that is missing is named, with the command that installs it.
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
 * @throws AxonError `DEPENDENCY_MISSING` from `load()`, saying whether the package is missing or failed to load.
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
          throw missingPackageError(packageName, component, error);
        },
      );
      return pending;
    },
    loaded: () => module,
  };
}

/**
 * Attach to the `import()` of an optional package: `() => import('pg').catch(optionalPackage)`. It passes the
 * failure on unchanged (the lazy module reports it); its purpose is the `.catch` itself, which tells bundlers
 * (esbuild, Rollup) that the import may fail at run time, so an application bundled without the package builds,
 * and one with it gets the package bundled.
 */
export function optionalPackage(error: unknown): never {
  throw error;
}

/** The error for a package that could not be imported: not installed (the usual case for an optional peer), or broken. */
export function missingPackageError(packageName: string, component: string, error: unknown): AxonError<'DEPENDENCY_MISSING'> {
  const reason = (error as Error)?.message ?? String(error);
  const code = (error as NodeJS.ErrnoException)?.code;
  const notInstalled = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && reason.includes(`'${packageName}'`);
  if (notInstalled) {
    return new AxonError('DEPENDENCY_MISSING', `${component} needs the package "${packageName}", which is not installed.`, {
      component,
      fix: `Install it in your application: npm install ${packageName} (an optional peer dependency of axon-rag, installed only by applications that use it).`,
      cause: error,
      details: { package: packageName },
    });
  }
  return new AxonError('DEPENDENCY_MISSING', `Cannot load the package "${packageName}" (${reason}).`, {
    component,
    fix: `Reinstall it in your application: npm install ${packageName}`,
    cause: error,
    details: { package: packageName },
  });
}
