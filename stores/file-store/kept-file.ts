/**
 * A file kept open after a load, for the parts of it read later, when first needed.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Closes the files whose readers became garbage while the file was still open. */
const openFiles = new FinalizationRegistry<FileHandle>((handle) => {
  handle.close().catch(() => undefined);
});

/**
 * Bytes read from a file that a load opened (a segment's documents, a keyword snapshot's postings): through the
 * handle the load opened, kept open while its readers live, or, once it is closed, by opening the file again for
 * each read (which fails if the file was removed since).
 */
export class KeptFile {
  private open: FileHandle | undefined;

  constructor(
    private readonly path: string,
    handle: FileHandle,
  ) {
    this.open = handle;
  }

  /** Keep the file open while `owner` lives. */
  keepOpen(owner: object): void {
    if (this.open !== undefined) openFiles.register(owner, this.open, this);
  }

  close(): void {
    if (this.open === undefined) return;
    openFiles.unregister(this);
    this.open.close().catch(() => undefined);
    this.open = undefined;
  }

  read(position: number, length: number): Uint8Array {
    const target = Buffer.allocUnsafe(length);
    this.readInto(position, target);
    return target;
  }

  /** Fill `target` with the bytes at `position`; a file that ends first is an error with code `EOF`. */
  readInto(position: number, target: Uint8Array): void {
    const descriptor = this.open?.fd ?? openSync(this.path, 'r');
    try {
      for (let done = 0; done < target.length; ) {
        const read = readSync(descriptor, target, done, target.length - done, position + done);
        if (read === 0) throw Object.assign(new Error(`unexpected end of file at byte ${position + done}`), { code: 'EOF' });
        done += read;
      }
    } finally {
      if (this.open === undefined) closeSync(descriptor);
    }
  }
}
