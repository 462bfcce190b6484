import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { EmptyStoreReason } from '../../src/errors.ts';
import { closestName } from '../../src/runtime/closest-name.ts';
import { MANIFEST_FILE } from './file-store-format.ts';

/** The folder the command line and the embedded default keep their store in. */
const DEFAULT_FOLDER = '.axon';

/**
 * Why a file store's folder holds nothing to search, when that is not "nothing was added yet": the folder does
 * not exist (a mistyped `--store` or `directory`), or it exists but holds no store. Names the folder, and a store
 * nearby that may have been meant: a folder of a close name beside it (`.axn` → `.axon`), else `.axon` in the
 * nearest folder that exists above it, else `.axon` in the working directory. `undefined` for a folder that holds
 * a store (then it is simply empty).
 */
export async function explainEmptyStore(directory: string, cwd: string = process.cwd()): Promise<EmptyStoreReason | undefined> {
  const exists = await isFolder(directory);
  if (exists && (await holdsStore(directory))) return undefined;
  const shown = displayPath(directory, cwd);
  const suggestion = await nearbyStore(directory, cwd);
  const problem = exists ? `The folder ${shown} holds no store` : `The store's folder ${shown} does not exist`;
  const storeOption = resolve(directory) === resolve(cwd, DEFAULT_FOLDER) ? '' : ` --store ${shown}`;
  const start = `To start a store in ${shown}, add documents to it first: \`axon ingest <paths…>${storeOption}\` or \`rag.addDocuments(documents)\`.`;
  const fix = suggestion === undefined ? start : `Did you mean ${displayPath(suggestion, cwd)}? It holds a store. ${start}`;
  return { problem, fix, details: { directory, exists, ...(suggestion === undefined ? {} : { suggestion }) } };
}

/** `directory` as a person would type it from `cwd`: relative when inside it, absolute otherwise. */
export function displayPath(directory: string, cwd: string): string {
  const path = relative(cwd, directory);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path) ? path : directory;
}

// --- Internal helpers ---

async function nearbyStore(directory: string, cwd: string): Promise<string | undefined> {
  const target = resolve(directory);
  let parent = dirname(target);
  while (!(await isFolder(parent)) && dirname(parent) !== parent) parent = dirname(parent);
  const names = await readdir(parent).catch(() => [] as string[]);
  const close = closestName(basename(target), names);
  const candidates = [close === undefined ? undefined : join(parent, close), join(parent, DEFAULT_FOLDER), resolve(cwd, DEFAULT_FOLDER)];
  for (const candidate of candidates) {
    if (candidate !== undefined && candidate !== target && (await holdsStore(candidate))) return candidate;
  }
  return undefined;
}

async function holdsStore(directory: string): Promise<boolean> {
  return (await stat(join(directory, MANIFEST_FILE)).catch(() => undefined))?.isFile() === true;
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}
