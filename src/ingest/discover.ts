import { readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { throwIfAborted } from '../errors.ts';
import { hasGlobSyntax, matchesGlob, matchesPathFilter, splitGlobBase } from './glob.ts';
import type { IngestIssue } from './types.ts';

export interface DiscoverOptions {
  /** Source names are paths relative to this directory. */
  baseDirectory: string;
  /** Patterns a file found by walking must match (any of them); all files when absent. */
  include?: string[];
  /** Patterns that leave a file (or a whole directory) out. */
  exclude: string[];
  /** Walk into entries whose name starts with a dot. */
  includeHidden: boolean;
  signal?: AbortSignal;
}

/** A file to ingest. */
export interface DiscoveredFile {
  /** Absolute path. */
  path: string;
  /** The path relative to the base directory, `/`-separated: what is stored as `sourceName`. */
  sourceName: string;
  size: number;
  /** Named by the caller rather than found by walking a directory or expanding a pattern. */
  explicit: boolean;
  /**
   * Asked for: named by the caller, matched by a glob pattern given as a path, or by an `include` pattern.
   * Such a file is read as plain text when no loader handles its extension (`README`, `LICENSE`), except that
   * one named directly must have no extension at all.
   */
  requested: boolean;
}

/** Where a given path reaches, so `pruneMissing` removes only sources that this run was responsible for. */
export type DiscoveryRoot = { kind: 'file'; sourceName: string } | { kind: 'directory'; path: string } | { kind: 'pattern'; base: string; pattern: string };

/**
 * Expand the caller's paths (files, directories, glob patterns) into a sorted list of files, each once.
 * Paths that do not exist, patterns that match nothing and unreadable directories become issues; discovery
 * itself never throws for them.
 */
export async function discoverFiles(
  paths: readonly string[],
  options: DiscoverOptions,
): Promise<{ files: DiscoveredFile[]; failed: IngestIssue[]; roots: DiscoveryRoot[] }> {
  const files = new Map<string, DiscoveredFile>();
  const failed: IngestIssue[] = [];
  const roots: DiscoveryRoot[] = [];
  const add = (file: DiscoveredFile) => {
    if (!files.has(file.path)) files.set(file.path, file);
  };
  for (const given of paths) {
    throwIfAborted(options.signal, 'ingest');
    const absolute = resolve(options.baseDirectory, given);
    const information = await stat(absolute).catch((error: NodeJS.ErrnoException) => error);
    if (!(information instanceof Error)) {
      if (information.isDirectory()) {
        roots.push({ kind: 'directory', path: absolute });
        const before = files.size;
        await walk(absolute, absolute, options, add, failed, new Set());
        if (files.size === before) failed.push({ path: given, code: 'empty', reason: describeEmptyDirectory(options) });
      } else if (information.isFile()) {
        const sourceName = toSourceName(options.baseDirectory, absolute);
        roots.push({ kind: 'file', sourceName });
        add({ path: absolute, sourceName, size: information.size, explicit: true, requested: true });
      } else {
        failed.push({ path: given, code: 'unreadable', reason: 'is neither a regular file nor a directory.' });
      }
      continue;
    }
    const code = (information as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && hasGlobSyntax(given)) {
      const pattern = toPosix(isAbsolute(given) ? given : given.replace(/^\.\//, ''));
      const { base, rest } = splitGlobBase(pattern);
      const baseAbsolute = resolve(options.baseDirectory, base);
      roots.push({ kind: 'pattern', base: baseAbsolute, pattern: rest });
      const before = files.size;
      const baseInformation = await stat(baseAbsolute).catch(() => undefined);
      if (baseInformation?.isDirectory()) {
        await walk(baseAbsolute, baseAbsolute, options, add, failed, new Set(), rest);
      }
      if (files.size === before) failed.push({ path: given, code: 'glob-no-match', reason: 'matches no file.' });
      continue;
    }
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // Still a root: pruning may remove what was stored from a file or folder that has since been deleted.
      roots.push({ kind: 'file', sourceName: toSourceName(options.baseDirectory, absolute) }, { kind: 'directory', path: absolute });
      failed.push({ path: given, code: 'not-found', reason: 'does not exist.' });
    } else failed.push({ path: given, code: 'unreadable', reason: `cannot be read (${code ?? (information as Error).message}).` });
  }
  const sorted = [...files.values()].sort((left, right) => (left.sourceName < right.sourceName ? -1 : left.sourceName > right.sourceName ? 1 : 0));
  return { files: sorted, failed, roots };
}

/** True when a stored source belongs to one of the roots and passes the filters, so pruning may remove it. */
export function isWithinRoots(sourceName: string, roots: readonly DiscoveryRoot[], options: DiscoverOptions): boolean {
  const absolute = resolve(options.baseDirectory, sourceName);
  return roots.some((root) => {
    if (root.kind === 'file') return root.sourceName === sourceName;
    const base = root.kind === 'directory' ? root.path : root.base;
    const relativePath = toPosix(relative(base, absolute));
    if (relativePath === '' || relativePath.startsWith('../') || isAbsolute(relativePath)) return false;
    if (root.kind === 'pattern' && !matchesGlob(relativePath, root.pattern)) return false;
    return passesFilters(relativePath, options, root.kind === 'pattern' ? root.pattern : undefined);
  });
}

/** A `/`-separated path relative to the base directory. */
export function toSourceName(baseDirectory: string, absolute: string): string {
  return toPosix(relative(baseDirectory, absolute)) || '.';
}

// --- Internal helpers ---

async function walk(
  root: string,
  directory: string,
  options: DiscoverOptions,
  add: (file: DiscoveredFile) => void,
  failed: IngestIssue[],
  visited: Set<string>,
  pattern?: string,
): Promise<void> {
  throwIfAborted(options.signal, 'ingest');
  // Symbolic links are followed; remembering real paths keeps a link cycle from walking forever.
  const real = await realpath(directory).catch(() => directory);
  if (visited.has(real)) return;
  visited.add(real);
  let entries;
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    failed.push({
      path: toSourceName(options.baseDirectory, directory),
      code: 'unreadable',
      reason: `cannot be listed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`,
    });
    return;
  }
  entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  for (const entry of entries) {
    if (!options.includeHidden && entry.name.startsWith('.')) continue;
    const absolute = join(directory, entry.name);
    const relativePath = toPosix(relative(root, absolute));
    let isDirectory = entry.isDirectory();
    let isFile = entry.isFile();
    let size = 0;
    if (entry.isSymbolicLink() || isFile) {
      const information = await stat(absolute).catch(() => undefined);
      if (!information) continue;
      isDirectory = information.isDirectory();
      isFile = information.isFile();
      size = information.size;
    }
    if (isDirectory) {
      if (options.exclude.some((exclude) => matchesPathFilter(`${relativePath}/`, exclude) || matchesPathFilter(relativePath, exclude))) continue;
      await walk(root, absolute, options, add, failed, visited, pattern);
    } else if (isFile && passesFilters(relativePath, options, pattern)) {
      const requested = pattern !== undefined || (options.include?.length ?? 0) > 0;
      add({ path: absolute, sourceName: toSourceName(options.baseDirectory, absolute), size, explicit: false, requested });
    }
  }
}

function passesFilters(relativePath: string, options: DiscoverOptions, pattern: string | undefined): boolean {
  if (pattern !== undefined && !matchesGlob(relativePath, pattern)) return false;
  const includes = options.include ?? [];
  if (includes.length > 0 && !includes.some((include) => matchesPathFilter(relativePath, include))) return false;
  return !options.exclude.some((exclude) => matchesPathFilter(relativePath, exclude));
}

function describeEmptyDirectory(options: DiscoverOptions): string {
  const filters = options.include?.length ? ` matching ${options.include.join(', ')}` : '';
  return `holds no file${filters} (hidden entries and ${options.exclude.join(', ') || 'nothing'} excluded).`;
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}
