import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { repairFileStore, verifyFileStore, type RecoveryReport, type VerifyReport } from '../../config/store-maintenance.ts';
import { UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/**
 * `axon store repair <dir>`: rebuild a file store's lost or damaged manifest from its segments (`FileStore.recover`).
 * `axon store verify <dir>`: check every file the manifest lists, whole (`FileStore.verify`); exit code 1 if any is damaged.
 */
export async function runStore(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  const [action, ...rest] = positionals;
  if (action !== 'repair' && action !== 'verify') {
    const got = action === undefined ? 'no action' : `"${action}"`;
    throw new UsageError(
      `store takes an action, got ${got}: axon store verify <dir> checks every file of a store; axon store repair <dir> [--dry-run] rebuilds a lost or damaged manifest.`,
    );
  }
  if (rest.length > 1) throw new UsageError(`store ${action} takes one folder, got ${rest.length}: axon store ${action} <dir>.`);
  const given = rest[0] ?? options.store;
  if (given === undefined) throw new UsageError(`store ${action} needs the store's folder: axon store ${action} <dir> (or --store DIR).`);
  const directory = resolve(io.cwd, given);
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new UsageError(`${directory} is not a folder; give the folder of a file store (the one --store names, default .axon).`);
  }
  if (action === 'verify') {
    const report = await verifyFileStore(directory);
    if (options.json) io.out(JSON.stringify({ directory, ...report }, null, 2));
    else io.out(describeVerify(directory, report).join('\n'));
    return report.ok ? 0 : 1;
  }
  const dryRun = options['dry-run'] === true;
  const report = await repairFileStore(directory, { dryRun });
  if (options.json) {
    io.out(JSON.stringify({ directory, ...report }, null, 2));
    return 0;
  }
  io.out(describeRepair(directory, report).join('\n'));
  return 0;
}

/** What the check found, one line per damaged file. */
export function describeVerify(directory: string, report: VerifyReport): string[] {
  if (report.files.length === 0) return [`${directory} holds no store files yet: nothing to check.`];
  const bytes = report.files.reduce((sum, file) => sum + file.bytes, 0);
  const checked = `${report.files.length} file${report.files.length === 1 ? '' : 's'} (${(bytes / 2 ** 20).toFixed(1)} MiB, generation ${report.generation}, ${report.documents} live document${report.documents === 1 ? '' : 's'})`;
  if (report.ok) return [`Checked ${checked} of ${directory}: every file matches the manifest.`];
  const damaged = report.files.filter((file) => file.problem !== undefined);
  return [
    `Checked ${checked} of ${directory}: ${damaged.length} damaged.`,
    ...damaged.map((file) => `  ${file.file} (${file.kind}): ${file.problem}`),
    damaged.every((file) => file.kind !== 'segment')
      ? '  Only derived indexes are damaged: the store rebuilds them from its documents when it reads them (nothing is lost).'
      : '  A damaged segment holds documents: restore the folder from a backup, or delete it and ingest your documents again. ' +
        'Searches that reach a damaged document fail with STORE_CORRUPT; nothing was changed.',
  ];
}

/** What the repair found and did (or would do), one line per fact. */
export function describeRepair(directory: string, report: RecoveryReport): string[] {
  const documents = `${report.documents} live document${report.documents === 1 ? '' : 's'}`;
  const segmentCount = `${report.segments.length} segment${report.segments.length === 1 ? '' : 's'}`;
  if (report.state === 'empty') return [`${directory} holds no store files (no manifest, no segments): nothing to repair.`];
  if (report.state === 'intact') return [`The manifest of ${directory} is intact (${segmentCount}, ${documents}): nothing to repair, nothing was changed.`];
  const found = report.state === 'missing' ? 'has no manifest' : 'has a manifest that fails its checks';
  const lines = [
    report.dryRun
      ? `${directory} ${found}. A repair would write a new manifest listing ${segmentCount} with ${documents}; nothing was written (--dry-run).`
      : `${directory} ${found}. Wrote a new manifest listing ${segmentCount} with ${documents}.`,
  ];
  lines.push(`  segments${report.dryRun ? ' it would list' : ' listed'}: ${report.segments.join(', ') || 'none'}`);
  if (report.skipped.length > 0) {
    lines.push(`  skipped, failing their own checks (left in place, not listed, never collected): ${report.skipped.join(', ')}`);
  }
  if (report.state === 'damaged') {
    lines.push(
      report.dryRun
        ? '  the damaged manifest would be kept beside the new one as manifest.json.corrupt-<time>'
        : `  the damaged manifest was kept as ${report.previousManifest ?? '(it vanished during the repair)'}`,
    );
  }
  lines.push(
    report.dryRun
      ? '  After a repair, documents deleted or replaced since their segment was last compacted may be back.'
      : '  Documents deleted or replaced since their segment was last compacted may be back; delete them again. ' +
          'Derived indexes (keyword, ANN) are rebuilt on the next open. Nothing was deleted.',
  );
  if (report.segments.length === 0 && report.skipped.length > 0 && !report.dryRun) {
    lines.push('  No segment checked out, so the store is now empty; the skipped files are still there for a backup or a closer look.');
  }
  return lines;
}
