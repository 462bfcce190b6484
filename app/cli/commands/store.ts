import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type DamagedDocument, repairFileStore, verifyFileStore, type RecoveryReport, type VerifyReport } from '../../config/store-maintenance.ts';
import { UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/**
 * `axon store repair <dir>`: keep every sound document of a file store whose segments or manifest are damaged
 * (`FileStore.recover`); exit code 1 when a document could not be kept (or a segment file could not be read).
 * `axon store verify <dir>`: check every file the manifest lists, whole (`FileStore.verify`); exit code 1 if any is damaged.
 */
export async function runStore(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  const [action, ...rest] = positionals;
  if (action !== 'repair' && action !== 'verify') {
    const got = action === undefined ? 'no action' : `"${action}"`;
    throw new UsageError(
      `store takes an action, got ${got}: axon store verify <dir> checks every file of a store; axon store repair <dir> [--dry-run] keeps every sound document of a damaged store.`,
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
  if (options.json) io.out(JSON.stringify({ directory, ...report }, null, 2));
  else io.out(describeRepair(directory, report).join('\n'));
  return report.lost > 0 || report.skipped.length > 0 ? 1 : 0;
}

/** What the check found, one line per damaged file. */
export function describeVerify(directory: string, report: VerifyReport): string[] {
  if (report.files.length === 0) return [`${directory} holds no store files yet: nothing to check.`];
  const bytes = report.files.reduce((sum, file) => sum + file.bytes, 0);
  const checked = `${report.files.length} file${report.files.length === 1 ? '' : 's'} (${(bytes / 2 ** 20).toFixed(1)} MiB, generation ${report.generation}, ${report.documents} live document${report.documents === 1 ? '' : 's'})`;
  if (report.ok) return [`Checked ${checked} of ${directory}: every file matches the manifest.`];
  const damaged = report.files.filter((file) => file.problem !== undefined);
  const lines = [`Checked ${checked} of ${directory}: ${damaged.length} damaged.`];
  for (const file of damaged) {
    lines.push(`  ${file.file} (${file.kind}): ${file.problem}`);
    if (file.unreadable !== undefined) lines.push(`    nothing in it can be read: ${file.unreadable}`);
    const documents = file.damagedDocuments ?? [];
    for (const document of documents.slice(0, DAMAGED_SHOWN)) lines.push(`    damaged: ${describeDamaged(document)}`);
    if (documents.length > DAMAGED_SHOWN) lines.push(`    … and ${documents.length - DAMAGED_SHOWN} more damaged documents (--json lists them all)`);
  }
  lines.push(
    damaged.every((file) => file.kind !== 'segment')
      ? '  Only derived indexes are damaged: the store rebuilds them from its documents when it reads them (nothing is lost).'
      : `  A damaged segment holds documents: \`axon store repair ${directory}\` keeps every sound one and lists the others (or restore the folder from a backup). ` +
          'Searches skip a damaged document they reach, with a warning; nothing was changed.',
  );
  return lines;
}

/** Damaged documents listed one per line before the rest are counted (`--json` lists them all). */
const DAMAGED_SHOWN = 20;

/** What the repair found and did (or would do), one line per fact. */
export function describeRepair(directory: string, report: RecoveryReport): string[] {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const documents = plural(report.documents, 'live document');
  const segmentCount = plural(report.segments.length, 'segment');
  if (report.state === 'empty') return [`${directory} holds no store files (no manifest, no segments): nothing to repair.`];
  const salvaged = report.salvaged.length + report.skipped.length;
  if (report.state === 'intact' && salvaged === 0) {
    return [`The manifest of ${directory} is intact (${segmentCount}, ${documents}): nothing to repair, nothing was changed.`];
  }
  const found =
    report.state === 'intact'
      ? `has an intact manifest, but ${plural(salvaged, 'segment')} ${salvaged === 1 ? 'fails' : 'fail'} ${salvaged === 1 ? 'its' : 'their'} checks`
      : report.state === 'missing'
        ? 'has no manifest'
        : 'has a manifest that fails its checks';
  const lines = [
    report.dryRun
      ? `${directory} ${found}. A repair would write a new manifest listing ${segmentCount} with ${documents}; nothing was written (--dry-run).`
      : `${directory} ${found}. Wrote a new manifest listing ${segmentCount} with ${documents}.`,
  ];
  lines.push(`  segments${report.dryRun ? ' it would list' : ' listed'}: ${report.segments.join(', ') || 'none'}`);
  for (const segment of report.salvaged) {
    const into = segment.into === undefined ? (report.dryRun && segment.kept > 0 ? ' in a new segment' : '') : ` in ${segment.into}`;
    const verb = report.dryRun ? 'would keep' : 'kept';
    lines.push(
      `  ${segment.file} is damaged: ${verb} ${segment.kept} of ${segment.kept + segment.damaged} live documents${into}; ${segment.damaged} damaged (the file is left in place, unlisted)`,
    );
  }
  for (const damaged of report.damaged.slice(0, DAMAGED_SHOWN)) lines.push(`  damaged: ${describeDamaged(damaged)}`);
  if (report.damaged.length > DAMAGED_SHOWN) lines.push(`  … and ${report.damaged.length - DAMAGED_SHOWN} more damaged documents (--json lists them all)`);
  if (report.skipped.length > 0) {
    lines.push(`  skipped, nothing in them could be read (left in place, not listed, never collected): ${report.skipped.join(', ')}`);
  }
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.state === 'damaged') {
    lines.push(
      report.dryRun
        ? '  the damaged manifest would be kept beside the new one as manifest.json.corrupt-<time>'
        : `  the damaged manifest was kept as ${report.previousManifest ?? '(it vanished during the repair)'}`,
    );
  }
  if (report.state !== 'intact') {
    lines.push(
      report.dryRun
        ? '  After a repair, documents deleted or replaced since their segment was last compacted may be back.'
        : '  Documents deleted or replaced since their segment was last compacted may be back; delete them again.',
    );
  }
  const lost =
    report.lost > 0
      ? `${plural(report.lost, 'live document')} could not be ${report.dryRun ? 'kept' : 'kept: ingest their sources again to restore them'}.`
      : report.skipped.length > 0
        ? 'Files that could not be read may have held documents.'
        : `Every live document ${report.dryRun ? 'would be' : 'was'} kept.`;
  lines.push(`  ${lost}${report.dryRun ? '' : ' Derived indexes (keyword, ANN) catch up on the next open. Nothing was deleted.'}`);
  if (report.segments.length === 0 && report.skipped.length > 0 && !report.dryRun) {
    lines.push('  No segment checked out, so the store is now empty; the skipped files are still there for a backup or a closer look.');
  }
  return lines;
}

/** One damaged document in words: its id, its source (or that it is unknown), what is wrong. */
function describeDamaged(document: DamagedDocument): string {
  const source = document.sourceType === undefined ? 'source unknown: its fields are damaged' : `${document.sourceType}:${document.sourceName}`;
  return `${JSON.stringify(document.id)} (${source}) in ${document.segment}: ${document.problem}`;
}
