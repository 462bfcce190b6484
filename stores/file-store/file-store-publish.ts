/**
 * How a write of `FileStore` publishes: the derived indexes it keeps in step get their change (and a new snapshot
 * when one is due), the manifest is replaced atomically, and only then does the state this process holds change,
 * all in one synchronous step, so a read of this process sees the state before the write or after it.
 */
import { liveDocuments, removeStoreFile, writeManifest, type Manifest } from './file-store-format.ts';
import { snapshotDue, writeSnapshot, type DerivedIndexKind, type StoreChange } from './file-store-snapshot.ts';
import type { LoadedState, MaintainedIndex } from './file-store-state.ts';

/** What publishing needs of the store that runs it, under its write lock. */
export interface PublishContext {
  readonly directory: string;
  readonly fileMode: number;
  /** The derived indexes the store keeps (keyword, ann). */
  readonly kinds: readonly DerivedIndexKind<unknown>[];
  /** The derived indexes the write keeps in step (`maintainedIndexes`). */
  maintained(state: LoadedState, manifest: Manifest): Promise<MaintainedIndex[]>;
  /** Forget `state` if it is still the store's, so the next call loads the store again. */
  drop(state: LoadedState): void;
}

/**
 * Publish `manifest`, with a new snapshot of each maintained derived index that is due one (or was
 * rebuilt on load). `change` is applied to a derived index before its snapshot is written, else only once
 * the manifest is durable, so a concurrent search never sees a derived index ahead of the vectors when
 * it does not have to: while one does (its snapshot being written), `state.changing` is set and reads wait.
 * `retired` are files this write makes garbage (merged segments); the manifest lists them, with the snapshots
 * it replaces, as its `garbage`, the only files a later writer may delete. `written` are segments this write
 * made: removed again if the write fails before the manifest is replaced. `commit` changes the rest of the state
 * (the vectors) in the same synchronous step as the derived indexes, once the manifest is durable.
 */
export async function publishManifest(
  context: PublishContext,
  state: LoadedState,
  manifest: Manifest,
  change: StoreChange,
  retired: readonly string[],
  written: readonly string[] = [],
  commit?: () => void,
): Promise<void> {
  const replaced: string[] = [];
  let snapshots: MaintainedIndex[] = [];
  let publishing = false;
  let settle: (() => void) | undefined;
  try {
    const live = liveDocuments(manifest);
    if (manifest.dimensions !== null) for (const kind of context.kinds) kind.prepare?.(live, manifest.dimensions);
    const maintained = await context.maintained(state, manifest);
    snapshots = maintained.filter(({ kind, loaded }) => loaded.saveReason !== undefined || snapshotDue(manifest, kind));
    if (snapshots.length > 0) state.changing = new Promise<void>((resolve) => (settle = resolve));
    for (const { kind, loaded } of snapshots) kind.apply(loaded.index, change);
    for (const { kind, loaded } of snapshots) {
      const previous = await writeSnapshot(kind, context.directory, loaded.index, manifest, context.fileMode);
      if (previous !== undefined) replaced.push(previous);
    }
    manifest.garbage = [...retired, ...replaced];
    publishing = true;
    await writeManifest(context.directory, manifest, context.fileMode);
    state.manifest = manifest;
    for (const entry of maintained) {
      if (snapshots.includes(entry)) entry.loaded.saveReason = undefined;
      else entry.kind.apply(entry.loaded.index, change);
    }
    commit?.();
    state.version++;
  } catch (error) {
    // A derived index in memory may have run ahead of the disk, or the disk of the memory: the next call reloads.
    if (snapshots.length > 0 || publishing) context.drop(state);
    // Segments this write made and no manifest lists are its own: gone with the write, not left unaccounted for.
    if (!publishing) await Promise.all(written.map((file) => removeStoreFile(context.directory, file).catch(() => undefined)));
    throw error;
  } finally {
    if (settle !== undefined) {
      state.changing = undefined;
      settle();
    }
  }
  await Promise.all(replaced.map((file) => removeStoreFile(context.directory, file).catch(() => undefined)));
}
