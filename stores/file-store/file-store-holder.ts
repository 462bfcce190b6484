/**
 * The state one `FileStore` holds (file-store-state.ts), and the order in which this process changes it: loading
 * it, taking in what other processes committed (file-store-follow.ts), and the writes of this process, which run
 * one at a time in one queue with the catch-ups.
 */
import { AxonError } from '../../src/errors.ts';
import type { VectorIndexOptions } from '../indexes/vector-index.ts';
import { applyCatchUp, manifestHead, prepareCatchUp, settledDerived } from './file-store-follow.ts';
import { emptyManifest, readManifest, type Manifest } from './file-store-format.ts';
import type { DerivedIndexKind } from './file-store-snapshot.ts';
import { ioError, loadState, type LoadedState } from './file-store-state.ts';

const NAME = 'file-store';

/** The loaded state of a store, kept up to date. */
export class StateHolder {
  /** The state operations use; `undefined` until loaded, and after `close()` or a failed write dropped it. */
  state: LoadedState | undefined;
  private loading: Promise<LoadedState> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** A manifest whose head does not state its generation, by its stamp, and the state that took it in: not read whole again while both stay. */
  private headless: { stamp: string; state: LoadedState } | undefined;

  constructor(
    private readonly directory: string,
    /** Whether reads take in what other processes committed first (the `follow` option). */
    readonly follows: boolean,
    private readonly vectorOptions: VectorIndexOptions,
    private readonly kinds: readonly DerivedIndexKind<unknown>[],
  ) {}

  /** The state, loaded from disk if it is not yet. */
  async ready(): Promise<LoadedState> {
    if (this.state) return this.state;
    this.loading ??= loadState(this.directory, this.vectorOptions).finally(() => (this.loading = undefined));
    const state = await this.loading;
    this.state ??= state;
    return this.state;
  }

  /**
   * The state an operation reads: loaded, up to date with what other processes committed (unless pinned), and not
   * in the middle of a write of this process.
   */
  async current(): Promise<LoadedState> {
    let state = await this.ready();
    if (this.follows) {
      const head = await manifestHead(this.directory).catch((error) => {
        throw ioError(this.directory, error);
      });
      if (head?.generation === null) {
        // The manifest read whole after this head was read is at least as new as the file the stamp names.
        if (this.headless?.stamp !== head.stamp || this.headless.state !== state) {
          state = await this.catchUp();
          this.headless = { stamp: head.stamp, state };
        }
      } else if ((head?.generation ?? 0) !== state.manifest.generation) state = await this.catchUp();
    }
    while (state.changing !== undefined) {
      await state.changing;
      state = await this.ready();
    }
    // Damage found in rows a load left in their files (see `VectorIndex.makeResident`) fails every operation, as a load that found it would.
    if (state.index.damage !== undefined) throw state.index.damage;
    return state;
  }

  /** Take in the manifest on disk: one catch-up at a time, never while a write of this process runs. */
  catchUp(): Promise<LoadedState> {
    return this.serialized(async () => {
      const onDisk = await readManifest(this.directory, NAME).catch((error) => {
        throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
      });
      return this.takeIn(onDisk ?? emptyManifest());
    });
  }

  /** Move the state to `next`, a manifest read from disk: in place when it extends the one held (file-store-follow.ts), else by loading again. */
  async takeIn(next: Manifest): Promise<LoadedState> {
    for (;;) {
      const state = this.state ?? (await this.ready());
      if (state.manifest.generation === next.generation) return state;
      // A state whose vectors were found damaged is not brought up to date but loaded again (after a repair, say).
      if (state.index.damage !== undefined) return this.replace(state, await loadState(this.directory, this.vectorOptions, next));
      const prepared = await prepareCatchUp(state, next, this.directory).catch((error) => {
        throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
      });
      if (prepared === 'superseded') {
        next = (await readManifest(this.directory, NAME)) ?? emptyManifest();
        continue;
      }
      if (prepared === 'reload') return this.replace(state, await loadState(this.directory, this.vectorOptions, next));
      const loaded = await settledDerived(state);
      if (this.state !== state || state.version !== prepared.version) {
        for (const close of prepared.segmentFiles.values()) close();
        continue;
      }
      applyCatchUp(state, prepared, this.kinds, loaded);
      return state;
    }
  }

  /**
   * Hold `next` in place of `replaced`, whose index stops its background work (the copy of vectors left in their
   * files). Its files are not closed here: a read that took the state before (operations hold the state they
   * started on across awaits, unregistered) may still read them, and they close when the state becomes garbage
   * (see `KeptFile.keepOpen`).
   */
  replace(replaced: LoadedState, next: LoadedState): LoadedState {
    replaced.index.release();
    if (this.headless?.state === replaced) this.headless = undefined;
    this.state = next;
    return next;
  }

  /** Run `operation` after every write and catch-up of this process queued before it, before those queued after. */
  serialized<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.queue.then(operation, operation);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Resolves once no write of this process is running or queued. */
  async idle(): Promise<void> {
    for (let tail = this.queue; ; ) {
      await tail.catch(() => undefined);
      if (tail === this.queue) return;
      tail = this.queue;
    }
  }
}
