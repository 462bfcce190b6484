/**
 * Maintenance of a store's files, for `axon store`: the command reaches the file store through the composition
 * root, like every other command, rather than importing an adapter. The store's module is loaded on first use,
 * so the other commands and `--help` do not load it.
 */
import type { RecoveryOptions, RecoveryReport } from '../../stores/file-store/file-store-recovery.ts';
import type { DamagedDocument } from '../../stores/file-store/file-store-salvage.ts';
import type { VerifyReport } from '../../stores/file-store/file-store-verify.ts';

export type { DamagedDocument, RecoveryOptions, RecoveryReport, VerifyReport };

/** Check every file of the file store in `directory` against its manifest, documents included; reads only. */
export async function verifyFileStore(directory: string): Promise<VerifyReport> {
  const { FileStore } = await import('../../stores/file-store/file-store.ts');
  return FileStore.verify({ directory });
}

/** Rebuild the lost or damaged manifest of the file store in `directory` from its segments; deletes nothing. */
export async function repairFileStore(directory: string, options: RecoveryOptions = {}): Promise<RecoveryReport> {
  const { FileStore } = await import('../../stores/file-store/file-store.ts');
  return FileStore.recover({ directory }, options);
}
