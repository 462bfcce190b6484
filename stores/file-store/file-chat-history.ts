/**
 * Conversations kept beside the embedded store, in its folder's `conversations/`: one append-only file per
 * conversation, written under the same cross-process lock and with the same durable-write discipline as the
 * store's own files (file-store-format.ts).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { ChatHistory, ChatHistoryLoadOptions, ChatHistoryOperationOptions, ConversationInfo, ConversationTurn } from '../../src/contracts/chat-history.ts';
import { assertConversationId, assertLastTurns, compareConversations, conversationInfo, normalizeConversationTurn } from '../../src/conversation/turns.ts';
import { AxonError, throwIfAborted } from '../../src/errors.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { acquireWriteLock, errorCode, syncDirectory } from './file-store-format.ts';

export const fileChatHistoryOptionsSchema = z
  .object({
    /** The embedded store's folder: conversations are kept in its `conversations/` folder. @default '.axon' */
    directory: z.string().min(1).default('.axon'),
    /** How long a write waits for another process's write before `STORE_LOCKED`, in milliseconds. @default 5000 */
    lockTimeoutMs: z.number().int().min(0).default(5000),
  })
  .strict();

export type FileChatHistoryOptions = z.input<typeof fileChatHistoryOptionsSchema>;

/** The folder, inside the store's, that holds the conversations. */
export const CONVERSATIONS_FOLDER = 'conversations';

const NAME = 'file-chat-history';
const RECORD = /^([0-9a-f]{16}) (.*)$/s;
const FILE_NAME = /^[a-z0-9_-]+(?:~[0-9a-f]{16})?\.jsonl$/;

/** Writes of one process, one at a time per folder, whichever instance makes them (the lock is per process). */
const writesInProcess = new Map<string, Promise<unknown>>();

/**
 * A `ChatHistory` on local disk beside the `FileStore`: `<directory>/conversations/<id>.jsonl`, one line per turn,
 * each line sealed with a checksum of its text. The folder is created private (0700) and each file 0600.
 *
 * - An acknowledged turn survives a kill: the line is written and `fsync`ed (and a new file's folder synced)
 *   before `append` resolves.
 * - A kill during an append leaves at most an unfinished last line, never acknowledged: reading skips it, and the
 *   next append, under the lock, cuts it off before writing. A damaged line anywhere else is `STORE_CORRUPT`,
 *   never skipped.
 * - Appends from several processes take the folder's write lock (`conversations/write.lock`, the store's own
 *   lock protocol: a lock left by a dead process is taken over), so each lands whole, once, in order.
 * - Ids are validated (letters, digits, `_`, `-`), so no id names a path outside the folder. An id with capitals
 *   gets a file name with a hash of it, so two ids that differ only in case never share a file on a
 *   case-insensitive disk.
 *
 * ```ts
 * import { FileChatHistory } from 'axon-rag/stores';
 *
 * const history = new FileChatHistory({ directory: '.axon' }); // the FileStore's folder
 * const turns = await history.load('support-42');
 * ```
 */
export class FileChatHistory implements ChatHistory {
  readonly name = NAME;
  /** The folder that holds the conversation files. */
  readonly folder: string;
  private readonly lockTimeoutMs: number;

  constructor(options: FileChatHistoryOptions = {}) {
    const parsed = parseOptions(fileChatHistoryOptionsSchema, options, NAME);
    this.folder = resolve(parsed.directory, CONVERSATIONS_FOLDER);
    this.lockTimeoutMs = parsed.lockTimeoutMs;
  }

  async load(id: string, options: ChatHistoryLoadOptions = {}): Promise<ConversationTurn[]> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    assertLastTurns(options.lastTurns, NAME);
    const turns = await this.readConversation(id);
    return options.lastTurns === undefined ? turns : turns.slice(-options.lastTurns);
  }

  async append(id: string, turn: ConversationTurn, options: ChatHistoryOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    const body = JSON.stringify({ conversation: id, turn: normalizeConversationTurn(turn, NAME) });
    const line = `${checksum(body)} ${body}\n`;
    await this.write(options.signal, 'append a turn', async () => {
      const path = join(this.folder, fileName(id));
      const created = !(await exists(path));
      const handle = await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_APPEND, 0o600);
      try {
        await cutUnfinishedLine(handle);
        await handle.writeFile(line);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (created) await syncDirectory(this.folder);
    });
  }

  async clear(id: string, options: ChatHistoryOperationOptions = {}): Promise<boolean> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    return this.write(options.signal, 'clear a conversation', async () => {
      const path = join(this.folder, fileName(id));
      if (!(await exists(path))) return false;
      // A damaged file is still this conversation's: clearing it is what was asked.
      const held = await this.readConversation(id).then(
        (turns) => turns.length > 0,
        (error: unknown) => (AxonError.hasCode(error, 'STORE_CORRUPT') ? true : Promise.reject(error)),
      );
      await unlink(path);
      await syncDirectory(this.folder);
      return held;
    });
  }

  async list(options: ChatHistoryOperationOptions = {}): Promise<ConversationInfo[]> {
    throwIfAborted(options.signal, NAME);
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw ioError('list the conversations', this.folder, error);
    }
    const conversations: ConversationInfo[] = [];
    for (const name of names.filter((entry) => FILE_NAME.test(entry)).sort()) {
      throwIfAborted(options.signal, NAME);
      const records = await this.readFile(join(this.folder, name));
      if (records.length === 0) continue;
      const id = records[0].conversation;
      conversations.push(
        conversationInfo(
          id,
          records.map((record) => record.turn),
        ),
      );
    }
    return conversations.sort(compareConversations);
  }

  // --- Internal helpers ---

  private async readConversation(id: string): Promise<ConversationTurn[]> {
    const path = join(this.folder, fileName(id));
    const records = await this.readFile(path);
    for (const record of records) {
      if (record.conversation !== id) throw corrupt(path, record.line, `the line belongs to conversation ${JSON.stringify(record.conversation)}`);
    }
    return records.map((record) => record.turn);
  }

  /** The whole lines of a conversation file, checked; an unfinished last line (an append a kill cut short) is left out. */
  private async readFile(path: string): Promise<{ conversation: string; turn: ConversationTurn; line: number }[]> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw ioError('read a conversation', path, error);
    }
    const lines = text.split('\n');
    // Whatever follows the last newline was never acknowledged: an append writes its newline last.
    lines.pop();
    return lines.map((line, index) => {
      const match = RECORD.exec(line);
      if (!match) throw corrupt(path, index + 1, 'it is not a checksum and a record');
      if (checksum(match[2]) !== match[1]) throw corrupt(path, index + 1, 'its checksum does not match');
      let record: { conversation?: unknown; turn?: unknown };
      try {
        record = JSON.parse(match[2]);
      } catch (error) {
        throw corrupt(path, index + 1, `it is not JSON (${(error as Error).message})`);
      }
      if (typeof record?.conversation !== 'string' || fileName(record.conversation) !== path.slice(this.folder.length + 1)) {
        throw corrupt(path, index + 1, 'it names a conversation this file is not for');
      }
      try {
        return { conversation: record.conversation, turn: normalizeConversationTurn(record.turn, NAME), line: index + 1 };
      } catch (error) {
        throw corrupt(path, index + 1, (error as Error).message);
      }
    });
  }

  /**
   * Run a write with the folder created, one at a time in this process and under the folder's lock across
   * processes. Cancellation is honoured until the write starts, never in the middle of it.
   */
  private write<T>(signal: AbortSignal | undefined, operation: string, body: () => Promise<T>): Promise<T> {
    const previous = writesInProcess.get(this.folder) ?? Promise.resolve();
    const run = previous.then(async () => {
      throwIfAborted(signal, NAME);
      try {
        await mkdir(this.folder, { recursive: true, mode: 0o700 });
      } catch (error) {
        throw ioError(operation, this.folder, error);
      }
      const release = await acquireWriteLock(this.folder, this.lockTimeoutMs, NAME);
      try {
        throwIfAborted(signal, NAME);
        return await body();
      } catch (error) {
        throw AxonError.isInstance(error) ? error : ioError(operation, this.folder, error);
      } finally {
        await release();
      }
    });
    const settled = run.catch(() => undefined);
    writesInProcess.set(this.folder, settled);
    // The chain's tail is dropped once nothing is queued behind it, so the map does not grow with folders used once.
    settled.then(() => {
      if (writesInProcess.get(this.folder) === settled) writesInProcess.delete(this.folder);
    });
    return run;
  }
}

// --- Internal helpers ---

/** The file of a conversation: its id, or, for an id with capitals, the id in lower case and a hash of it. */
function fileName(id: string): string {
  return /[A-Z]/.test(id) ? `${id.toLowerCase()}~${checksum(id)}.jsonl` : `${id}.jsonl`;
}

function checksum(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/** Bytes read at a time while looking back for the last newline. */
const TAIL_CHUNK_BYTES = 64 * 1024;

/** Cut off an unfinished last line (an append killed midway) so the next line starts on a line of its own. */
async function cutUnfinishedLine(handle: FileHandle): Promise<void> {
  const { size } = await handle.stat();
  let end = size;
  const buffer = Buffer.alloc(TAIL_CHUNK_BYTES);
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, end - start, start);
    const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (newline !== -1) {
      if (start + newline + 1 < size) await handle.truncate(start + newline + 1);
      return;
    }
    end = start;
  }
  if (size > 0) await handle.truncate(0);
}

function corrupt(path: string, line: number, problem: string): AxonError {
  return new AxonError('STORE_CORRUPT', `Line ${line} of ${path} is damaged: ${problem}.`, {
    component: NAME,
    fix: 'Nothing was changed. Restore the file from a backup, or delete that line (or the file) to keep the rest.',
    details: { file: path, line },
  });
}

function ioError(operation: string, path: string, cause: unknown): AxonError {
  const code = errorCode(cause);
  return new AxonError('STORE_IO', `Cannot ${operation} in ${path}${code ? ` (${code})` : ''}.`, {
    component: NAME,
    fix:
      code === 'EACCES' || code === 'EPERM'
        ? 'Check the permissions of the folder.'
        : code === 'ENOSPC'
          ? 'Free some disk space.'
          : 'Check the folder and retry.',
    cause,
    details: { path, code },
  });
}
