import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AxonError, ConfigError, type ConfigIssue } from '../../src/errors.ts';
import { createRegistry } from './built-ins.ts';
import type { ComponentRegistry } from './registry.ts';

/** What a plugin module exports: `register(registry)`, directly or on its default export. */
interface PluginModule {
  register?: (registry: ComponentRegistry) => void;
  default?: { register?: (registry: ComponentRegistry) => void };
}

/** How a module is imported: the runtime's own `import()` unless a caller (a test) gives another. */
export type ModuleImporter = (url: string) => Promise<unknown>;

/**
 * Read a JSON configuration file and load its plugins into the registry. Relative paths in it are resolved
 * from the file's folder. A plugin written in TypeScript (`.ts`, `.mts`, `.cts`) is loaded as Node loads it
 * where Node strips types itself, else through `tsx` when the application has it installed.
 *
 * @throws ConfigError for malformed JSON (with its line and column), or a plugin that cannot be loaded.
 * @throws AxonError `NOT_FOUND` when the file cannot be read.
 */
export async function loadConfigFile(
  path: string,
  registry: ComponentRegistry = createRegistry(),
  options: { importModule?: ModuleImporter } = {},
): Promise<{ config: unknown; registry: ComponentRegistry; baseDirectory: string; source: string }> {
  const source = resolve(path);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    throw new AxonError('NOT_FOUND', `Cannot read the configuration file ${source} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`, {
      component: 'config',
      fix: 'Check the path given to --config, or create axon.config.json.',
    });
  }
  const config = parseJson(text.replace(/^\uFEFF/, ''), source);
  const baseDirectory = dirname(source);
  const plugins = (config as { plugins?: unknown })?.plugins;
  if (Array.isArray(plugins)) {
    const issues: ConfigIssue[] = [];
    for (const [index, plugin] of plugins.entries()) {
      if (typeof plugin !== 'string') continue;
      try {
        const module = await importPlugin(plugin, baseDirectory, options.importModule ?? ((url) => import(url)));
        const register = module.register ?? module.default?.register;
        if (typeof register !== 'function')
          issues.push({ path: `plugins[${index}]`, code: 'plugin_invalid', message: `${plugin} does not export a register(registry) function` });
        else register(registry);
      } catch (error) {
        issues.push({ path: `plugins[${index}]`, code: 'plugin_invalid', message: `cannot load ${plugin}: ${(error as Error).message}` });
      }
    }
    if (issues.length > 0) throw new ConfigError(issues, { source });
  }
  return { config, registry, baseDirectory, source };
}

// --- Internal helpers ---

/** The file's JSON; a syntax error is reported with its line and column, and the text there. */
function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : /end of JSON input/i.test(message) ? text.length : undefined;
    // Node 20 says "… in JSON at position 67"; later versions add "(line 3 column 35)". The line and column are given here.
    const problem = message.replace(/\s*in JSON at position \d+.*$/s, '').replace(/\s*\(line \d+ column \d+\)$/, '');
    if (offset === undefined) throw new ConfigError([{ path: '', code: 'invalid_json', message: `not valid JSON: ${problem}` }], { source });
    const before = text.slice(0, offset);
    const line = before.split(/\r\n|\r|\n/).length;
    const lineStart = Math.max(before.lastIndexOf('\n'), before.lastIndexOf('\r')) + 1;
    const lineText = text.slice(lineStart).split(/\r\n|\r|\n/)[0];
    const near = lineText.trim() === '' ? '' : ` in ${JSON.stringify(lineText.trim().slice(0, 80))}`;
    throw new ConfigError(
      [{ path: '', code: 'invalid_json', message: `not valid JSON at line ${line}, column ${offset - lineStart + 1}${near}: ${problem}` }],
      { source },
    );
  }
}

const TYPESCRIPT_FILE = /\.[cm]?ts$/i;

/**
 * Import a plugin: a file relative to the configuration's folder, an absolute path, or a package name. A
 * TypeScript file the runtime cannot load itself (Node before 22.18 has no type stripping: "Unknown file
 * extension") is loaded through `tsx`'s module API, found from the configuration's folder, when the application
 * has it; otherwise the error says exactly what to do.
 */
async function importPlugin(plugin: string, baseDirectory: string, importModule: ModuleImporter): Promise<PluginModule> {
  const file = plugin.startsWith('.') || isAbsolute(plugin) ? resolve(baseDirectory, plugin) : undefined;
  const specifier = file === undefined ? plugin : pathToFileURL(file).href;
  try {
    return (await importModule(specifier)) as PluginModule;
  } catch (error) {
    if (file === undefined || !TYPESCRIPT_FILE.test(file) || (error as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  }
  const tsx = await findTsx(baseDirectory, importModule);
  if (tsx === undefined) {
    throw new Error(
      `Node ${process.versions.node} does not load TypeScript by itself ("Unknown file extension .ts"). ` +
        'Install tsx in your application (npm install --save-dev tsx) and axon loads the plugin through it, ' +
        'or compile the plugin to JavaScript and list the .js file, or run Node 22.18 or later, which strips types.',
    );
  }
  return (await tsx.tsImport(specifier, { parentURL: pathToFileURL(join(baseDirectory, 'axon.config.json')).href })) as PluginModule;
}

/** `tsx`'s module API as installed for the application (found from its folder upwards), if it is. */
async function findTsx(baseDirectory: string, importModule: ModuleImporter): Promise<TsxApi | undefined> {
  const require = createRequire(join(baseDirectory, 'package.json'));
  let manifestPath: string;
  try {
    manifestPath = require.resolve('tsx/package.json');
  } catch {
    return undefined;
  }
  // The ES module build of `tsx/esm/api`, as its package's exports name it (its CommonJS build cannot import itself when required).
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { exports?: Record<string, unknown> };
  const target = manifest.exports?.['./esm/api'] as string | { import?: string | { default?: string } } | undefined;
  const entry = typeof target === 'string' ? target : typeof target?.import === 'string' ? target.import : target?.import?.default;
  if (entry === undefined) return undefined;
  const api = (await importModule(pathToFileURL(join(dirname(manifestPath), entry)).href)) as Partial<TsxApi>;
  return typeof api.tsImport === 'function' ? (api as TsxApi) : undefined;
}

interface TsxApi {
  tsImport(specifier: string, options: { parentURL: string }): Promise<unknown>;
}
