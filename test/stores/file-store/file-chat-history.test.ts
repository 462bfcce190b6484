import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONVERSATIONS_FOLDER, FileChatHistory } from '../../../stores/file-store/file-chat-history.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { conformanceTurn, describeChatHistoryConformance } from '../../../testing/chat-history.ts';
import { temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-chat-history-');
const childModule = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'open-file-chat-history.ts');

describeChatHistoryConformance(
  'file-chat-history',
  async () => {
    const directory = await temporaryDirectory();
    return { history: new FileChatHistory({ directory }), child: { module: childModule, argument: { directory } } };
  },
  { processes: true, nodeArguments: ['--import', 'tsx'] },
);

describe('FileChatHistory on disk', () => {
  it('keeps conversations in the store folder, the folder 0700 and each file 0600, one line per turn', async () => {
    const directory = await temporaryDirectory();
    const history = new FileChatHistory({ directory });
    await history.append('support-42', conformanceTurn(0));
    await history.append('support-42', conformanceTurn(1));
    const folder = join(directory, CONVERSATIONS_FOLDER);
    expect(history.folder).toBe(folder);
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    const file = join(folder, 'support-42.jsonl');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(lines[0]).toMatch(/^[0-9a-f]{16} \{"conversation":"support-42","turn":\{"question":"Question 0\?"/);
  });

  it('gives an id with capitals a file of its own, named by a hash', async () => {
    const directory = await temporaryDirectory();
    const history = new FileChatHistory({ directory });
    await history.append('Chat', conformanceTurn(0));
    await history.append('chat', conformanceTurn(1));
    const names = (await readdir(join(directory, CONVERSATIONS_FOLDER))).filter((name) => name.endsWith('.jsonl')).sort();
    expect(names).toHaveLength(2);
    expect(names[0]).toBe('chat.jsonl');
    expect(names[1]).toMatch(/^chat~[0-9a-f]{16}\.jsonl$/);
  });

  it('lives beside a FileStore in the same folder without disturbing it', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory });
    await store.add([{ id: 'a', content: 'alpha', sourceType: 'test', sourceName: 'a', score: 0, metadata: {}, embedding: [1, 0, 0] }]);
    const history = new FileChatHistory({ directory });
    await history.append('beside', conformanceTurn(0));
    await store.add([{ id: 'b', content: 'beta', sourceType: 'test', sourceName: 'b', score: 0, metadata: {}, embedding: [0, 1, 0] }]);
    await store.close();
    const reopened = new FileStore({ directory });
    expect(await reopened.count()).toBe(2);
    await reopened.close();
    expect(await history.load('beside')).toHaveLength(1);
  });

  it('reads past an unfinished last line, and the next append cuts it off', async () => {
    const directory = await temporaryDirectory();
    const history = new FileChatHistory({ directory });
    await history.append('torn', conformanceTurn(0));
    const file = join(directory, CONVERSATIONS_FOLDER, 'torn.jsonl');
    const whole = await readFile(file, 'utf8');
    // What a kill in the middle of the second append leaves: the start of a line, no newline.
    await appendFile(file, whole.slice(0, 40));
    expect((await history.load('torn')).map((turn) => turn.runId)).toEqual(['run-0']);
    expect(await history.list()).toMatchObject([{ id: 'torn', turns: 1 }]);
    await history.append('torn', conformanceTurn(1));
    expect((await history.load('torn')).map((turn) => turn.runId)).toEqual(['run-0', 'run-1']);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(3);
    // The torn start is gone: the second line is run-1's record from its first byte.
    expect(lines[1]).toMatch(/^[0-9a-f]{16} \{"conversation":"torn","turn":\{"question":"Question 1\?"/);
  });

  it('a file holding only an unfinished line is no conversation, and appending starts it afresh', async () => {
    const directory = await temporaryDirectory();
    await mkdir(join(directory, CONVERSATIONS_FOLDER), { recursive: true });
    const file = join(directory, CONVERSATIONS_FOLDER, 'fresh.jsonl');
    await writeFile(file, '0123456789abcdef {"conversation":"fre');
    const history = new FileChatHistory({ directory });
    expect(await history.load('fresh')).toEqual([]);
    expect(await history.list()).toEqual([]);
    await history.append('fresh', conformanceTurn(3));
    expect((await history.load('fresh')).map((turn) => turn.runId)).toEqual(['run-3']);
    expect((await readFile(file, 'utf8')).split('\n')).toHaveLength(2);
  });

  it('a damaged whole line is STORE_CORRUPT naming the file and line, never skipped, and nothing is changed', async () => {
    const directory = await temporaryDirectory();
    const history = new FileChatHistory({ directory });
    for (let index = 0; index < 3; index++) await history.append('damaged', conformanceTurn(index));
    const file = join(directory, CONVERSATIONS_FOLDER, 'damaged.jsonl');
    const text = await readFile(file, 'utf8');
    const damaged = text.replace('Answer 1', 'Answer 9');
    await writeFile(file, damaged);
    await expect(history.load('damaged')).rejects.toMatchObject({ code: 'STORE_CORRUPT', details: { file, line: 2 } });
    await expect(history.list()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    expect(await readFile(file, 'utf8')).toBe(damaged);
    // Clearing is still possible: the file is that conversation's.
    expect(await history.clear('damaged')).toBe(true);
    expect(await history.list()).toEqual([]);
  });

  it('a line moved into another conversation file is STORE_CORRUPT', async () => {
    const directory = await temporaryDirectory();
    const history = new FileChatHistory({ directory });
    await history.append('one', conformanceTurn(0));
    await history.append('two', conformanceTurn(1));
    const folder = join(directory, CONVERSATIONS_FOLDER);
    await appendFile(join(folder, 'one.jsonl'), await readFile(join(folder, 'two.jsonl'), 'utf8'));
    await expect(history.load('one')).rejects.toMatchObject({ code: 'STORE_CORRUPT', details: { line: 2 } });
  });

  it('leaves files of other names in the folder alone', async () => {
    const directory = await temporaryDirectory();
    const folder = join(directory, CONVERSATIONS_FOLDER);
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'notes.txt'), 'mine');
    await writeFile(join(folder, '..jsonl'), 'not a conversation');
    const history = new FileChatHistory({ directory });
    await history.append('real', conformanceTurn(0));
    expect((await history.list()).map((entry) => entry.id)).toEqual(['real']);
    expect(await readFile(join(folder, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('two instances on one folder in one process write one at a time', async () => {
    const directory = await temporaryDirectory();
    const left = new FileChatHistory({ directory });
    const right = new FileChatHistory({ directory });
    await Promise.all(Array.from({ length: 16 }, (_, index) => (index % 2 ? left : right).append('pair', conformanceTurn(index))));
    expect((await left.load('pair')).map((turn) => turn.runId).sort()).toEqual(Array.from({ length: 16 }, (_, index) => `run-${index}`).sort());
  });

  it('waits for a lock another process holds, then says STORE_LOCKED with the fix', async () => {
    const directory = await temporaryDirectory();
    const folder = join(directory, CONVERSATIONS_FOLDER);
    await mkdir(folder, { recursive: true });
    // PID 1 is alive on every Unix machine: a lock it holds is not stale.
    await writeFile(join(folder, 'write.lock'), JSON.stringify({ pid: 1, hostname: (await import('node:os')).hostname(), token: 'x' }));
    const history = new FileChatHistory({ directory, lockTimeoutMs: 50 });
    await expect(history.append('locked', conformanceTurn(0))).rejects.toMatchObject({ code: 'STORE_LOCKED' });
    expect(await history.load('locked')).toEqual([]);
  });

  it('refuses unknown options', () => {
    expect(() => new FileChatHistory({ directory: '.axon', path: 'x' } as never)).toThrow(/path/);
  });
});
