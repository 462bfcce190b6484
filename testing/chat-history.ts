/**
 * The behaviour every `ChatHistory` must have, as one suite that each history runs:
 *
 * ```ts
 * describeChatHistoryConformance('memory-chat-history', async () => ({ history: new MemoryChatHistory() }));
 * ```
 *
 * Only the public contract is used. A history shared between processes (a file, a database) declares
 * `processes: true`, and its handle says how a child process opens the same history (`child`: a module and the
 * argument its export is called with); the suite then starts real processes: two appending to one conversation
 * at once, and one killed with SIGKILL in the middle of appends.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect } from 'vitest';
import type { ChatHistory, ConversationTurn } from '../src/contracts/chat-history.ts';
import type { JsonValue } from '../src/document.ts';
import { MAX_TURN_CHARACTERS, normalizeConversationTurn } from '../src/conversation/turns.ts';
import { conformanceCases, type ConformanceSkip } from './skip.ts';

export interface ChatHistoryHandle {
  history: ChatHistory;
  cleanup?: () => Promise<void>;
  /** How a child process opens this same history; needed with `processes: true`. */
  child?: ChatHistoryChildSpec;
}

/** What a child process imports and calls to open the history under test. */
export interface ChatHistoryChildSpec {
  /** Absolute path (or `file:` URL) of the module. */
  module: string;
  /** The export called with `argument`; it returns the history, or a promise of it. @default 'openChatHistory' */
  exportName?: string;
  /** What that export needs to open the same history (its folder, its URL and table), as JSON. */
  argument?: JsonValue;
}

export interface ChatHistoryConformanceOptions {
  /** Cases (the `it` titles) this history cannot run, each group with its reason. */
  skip?: ConformanceSkip[];
  /** The history is shared between processes: the two-process and kill cases run (each handle must give `child`). @default false */
  processes?: boolean;
  /** Node arguments of the child processes, e.g. `['--import', 'tsx']` when the child module is TypeScript. @default [] */
  nodeArguments?: string[];
}

const PROCESS_TIMEOUT_MS = 120_000;
/** The titles of the cases that start processes (to skip them with a reason of your own). */
export const CHAT_HISTORY_PROCESS_CASES = [
  'two processes appending at once: every turn lands once, whole, each in its order',
  'a kill during appends loses nothing acknowledged and leaves nothing half written',
];

export function describeChatHistoryConformance(name: string, factory: () => Promise<ChatHistoryHandle>, options: ChatHistoryConformanceOptions = {}): void {
  // A history one process keeps to itself has its process cases shown as skipped, with the reason.
  const processSkip: ConformanceSkip[] = options.processes
    ? []
    : [{ reason: 'not shared between processes (processes: false)', tests: CHAT_HISTORY_PROCESS_CASES }];
  const cases = conformanceCases([...processSkip, ...(options.skip ?? [])]);
  const test = cases.test;
  const cleanups: (() => Promise<void>)[] = [];
  const open = async (): Promise<ChatHistoryHandle> => {
    const handle = await factory();
    cleanups.push(async () => {
      await handle.history.close?.();
      await handle.cleanup?.();
    });
    return handle;
  };
  const history = async () => (await open()).history;

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  describe(`${name}: ChatHistory conformance`, () => {
    describe('append and load', () => {
      test('has a kebab-case name', async () => {
        expect((await history()).name).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
      });

      test('loads nothing for an id never appended to', async () => {
        const subject = await history();
        expect(await subject.load('never-used')).toEqual([]);
        expect(await subject.list()).toEqual([]);
      });

      test('loads the turns in the order appended, as given', async () => {
        const subject = await history();
        const turns = Array.from({ length: 5 }, (_, index) => conformanceTurn(index));
        for (const turn of turns) await subject.append('ordered', turn);
        expect(await subject.load('ordered')).toEqual(turns.map((turn) => normalizeConversationTurn(turn, 'test')));
      });

      test('keeps conversations apart', async () => {
        const subject = await history();
        await subject.append('left', conformanceTurn(0, { question: 'left 0' }));
        await subject.append('right', conformanceTurn(0, { question: 'right 0' }));
        await subject.append('left', conformanceTurn(1, { question: 'left 1' }));
        expect((await subject.load('left')).map((turn) => turn.question)).toEqual(['left 0', 'left 1']);
        expect((await subject.load('right')).map((turn) => turn.question)).toEqual(['right 0']);
      });

      test('ids differing only in case are different conversations', async () => {
        const subject = await history();
        await subject.append('Case', conformanceTurn(0, { question: 'upper' }));
        await subject.append('case', conformanceTurn(0, { question: 'lower' }));
        await subject.append('CASE', conformanceTurn(0, { question: 'all upper' }));
        expect((await subject.load('Case')).map((turn) => turn.question)).toEqual(['upper']);
        expect((await subject.load('case')).map((turn) => turn.question)).toEqual(['lower']);
        expect((await subject.load('CASE')).map((turn) => turn.question)).toEqual(['all upper']);
      });

      test('keeps every character and field of a turn', async () => {
        const subject = await history();
        const turn = conformanceTurn(0, {
          question: 'Ünïcødé “quotes” \\ backslash\ttab\nnew line \u2028 ✓ 😀 עברית {"json": [1]}',
          searchedQuestion: 'rewritten: 😀 {"json": [1]}',
          answer: 'Line one [1].\n\nLine two [2]. </turn> <system>not a tag</system>',
          citations: [
            { label: 1, id: 'doc-1', sourceType: 'file', sourceName: 'guides/ünï.md', pageNumber: 3, chunkIndex: 0 },
            { label: 2, id: 'doc-2', sourceType: 'url', sourceName: 'https://example.com/a?b=c' },
          ],
        });
        await subject.append('characters', turn);
        expect(await subject.load('characters')).toEqual([turn]);
      });

      test('stores times as toISOString writes them', async () => {
        const subject = await history();
        await subject.append('times', conformanceTurn(0, { askedAt: '2025-03-01T10:00:00+02:00', answeredAt: '2025-03-01T08:00:01.5Z' }));
        const [stored] = await subject.load('times');
        expect(stored.askedAt).toBe('2025-03-01T08:00:00.000Z');
        expect(stored.answeredAt).toBe('2025-03-01T08:00:01.500Z');
      });

      test('returns copies: changing a loaded turn changes nothing stored', async () => {
        const subject = await history();
        const turn = conformanceTurn(0);
        await subject.append('copies', turn);
        turn.question = 'changed after append';
        const [loaded] = await subject.load('copies');
        loaded.question = 'changed after load';
        loaded.citations.push({ label: 9, id: 'x', sourceType: 'x', sourceName: 'x' });
        expect(await subject.load('copies')).toEqual([normalizeConversationTurn(conformanceTurn(0), 'test')]);
      });
    });

    describe('bounds', () => {
      test('lastTurns gives the most recent turns, oldest first', async () => {
        const subject = await history();
        for (let index = 0; index < 5; index++) await subject.append('window', conformanceTurn(index));
        expect((await subject.load('window', { lastTurns: 2 })).map((turn) => turn.runId)).toEqual(['run-3', 'run-4']);
        expect(await subject.load('window', { lastTurns: 50 })).toHaveLength(5);
        expect(await subject.load('unknown', { lastTurns: 2 })).toEqual([]);
        for (const lastTurns of [0, -1, 1.5, Number.NaN]) {
          await expect(subject.load('window', { lastTurns })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
        }
      });

      test('refuses a turn over the size limit, writing nothing', async () => {
        const subject = await history();
        await subject.append('large', conformanceTurn(0));
        const huge = conformanceTurn(1, { answer: 'x'.repeat(MAX_TURN_CHARACTERS) });
        await expect(subject.append('large', huge)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        expect(await subject.load('large')).toHaveLength(1);
      });

      test('refuses ids that could be paths or are not names, writing nothing', async () => {
        const subject = await history();
        const ids: unknown[] = [
          '',
          '.',
          '..',
          '../outside',
          'a/b',
          'a\\b',
          '/etc/passwd',
          'C:drive',
          'x'.repeat(129),
          'con',
          'NUL',
          'a b',
          'ü',
          'a.b',
          'a\u0000b',
          42,
          null,
        ];
        for (const id of ids) {
          await expect(subject.append(id as string, conformanceTurn(0)), `append(${JSON.stringify(id)})`).rejects.toMatchObject({ code: 'INVALID_INPUT' });
          await expect(subject.load(id as string), `load(${JSON.stringify(id)})`).rejects.toMatchObject({ code: 'INVALID_INPUT' });
          await expect(subject.clear(id as string), `clear(${JSON.stringify(id)})`).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        }
        expect(await subject.list()).toEqual([]);
        await subject.append('x'.repeat(128), conformanceTurn(0));
        expect(await subject.load('x'.repeat(128))).toHaveLength(1);
      });

      test('refuses malformed turns, writing nothing', async () => {
        const subject = await history();
        const bad: unknown[] = [
          null,
          'a question',
          { ...conformanceTurn(0), question: '' },
          { ...conformanceTurn(0), question: 42 },
          { ...conformanceTurn(0), answer: undefined },
          { ...conformanceTurn(0), searchedQuestion: '  ' },
          { ...conformanceTurn(0), runId: '' },
          { ...conformanceTurn(0), askedAt: 'yesterday' },
          { ...conformanceTurn(0), answeredAt: 17 },
          { ...conformanceTurn(0), citations: 'none' },
          { ...conformanceTurn(0), citations: [{ label: 0, id: 'a', sourceType: 'file', sourceName: 'a.md' }] },
          { ...conformanceTurn(0), citations: [{ label: 1, id: 'a', sourceType: 'file' }] },
          { ...conformanceTurn(0), citations: [{ label: 1, id: 'a', sourceType: 'file', sourceName: 'a.md', secret: 'x' }] },
          { ...conformanceTurn(0), status: 'answered' },
          { ...conformanceTurn(0), answer: 'a NUL \u0000 inside' },
          { ...conformanceTurn(0), question: 'a lone surrogate \ud800 inside' },
        ];
        for (const turn of bad) {
          await expect(subject.append('malformed', turn as ConversationTurn), JSON.stringify(turn)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        }
        expect(await subject.load('malformed')).toEqual([]);
        expect(await subject.list()).toEqual([]);
      });
    });

    describe('clear and list', () => {
      test('clear removes one conversation and says whether it existed', async () => {
        const subject = await history();
        await subject.append('keep', conformanceTurn(0));
        await subject.append('drop', conformanceTurn(0));
        await subject.append('drop', conformanceTurn(1));
        expect(await subject.clear('drop')).toBe(true);
        expect(await subject.load('drop')).toEqual([]);
        expect(await subject.load('keep')).toHaveLength(1);
        expect(await subject.clear('drop')).toBe(false);
        expect(await subject.clear('never-used')).toBe(false);
        expect((await subject.list()).map((entry) => entry.id)).toEqual(['keep']);
      });

      test('a cleared conversation starts again from its first turn', async () => {
        const subject = await history();
        await subject.append('again', conformanceTurn(0));
        await subject.clear('again');
        await subject.append('again', conformanceTurn(7));
        expect((await subject.load('again')).map((turn) => turn.runId)).toEqual(['run-7']);
      });

      test('list gives each conversation with its turns and times, most recently updated first', async () => {
        const subject = await history();
        await subject.append('older', conformanceTurn(0));
        await subject.append('older', conformanceTurn(1));
        await subject.append('newer', conformanceTurn(5));
        await subject.append('tie-b', conformanceTurn(3));
        await subject.append('tie-a', conformanceTurn(3));
        expect(await subject.list()).toEqual([
          { id: 'newer', turns: 1, startedAt: timeOf(5), updatedAt: timeOf(5, 1) },
          { id: 'tie-a', turns: 1, startedAt: timeOf(3), updatedAt: timeOf(3, 1) },
          { id: 'tie-b', turns: 1, startedAt: timeOf(3), updatedAt: timeOf(3, 1) },
          { id: 'older', turns: 2, startedAt: timeOf(0), updatedAt: timeOf(1, 1) },
        ]);
      });
    });

    describe('concurrency and cancellation', () => {
      test('appends racing in one process each land once, whole', async () => {
        const subject = await history();
        await Promise.all([
          ...Array.from({ length: 20 }, (_, index) => subject.append('racing', conformanceTurn(index, { answer: `answer ${index} ${'y'.repeat(2000)}` }))),
          ...Array.from({ length: 5 }, (_, index) => subject.append('beside', conformanceTurn(index))),
        ]);
        const turns = await subject.load('racing');
        expect(turns.map((turn) => turn.runId).sort()).toEqual(Array.from({ length: 20 }, (_, index) => `run-${index}`).sort());
        for (const turn of turns) expect(turn.answer).toBe(`answer ${turn.runId.slice(4)} ${'y'.repeat(2000)}`);
        expect(await subject.load('beside')).toHaveLength(5);
      });

      test('an aborted signal rejects with ABORTED and writes nothing', async () => {
        const subject = await history();
        const controller = new AbortController();
        controller.abort();
        await expect(subject.append('aborted', conformanceTurn(0), { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
        await expect(subject.load('aborted', { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
        expect(await subject.load('aborted')).toEqual([]);
      });
    });

    describe('processes', () => {
      test(
        CHAT_HISTORY_PROCESS_CASES[0],
        async () => {
          const handle = await open();
          const child = childSpec(handle);
          const count = 30;
          await Promise.all(
            ['first', 'second'].map((prefix) => runChild(child, options.nodeArguments, { id: 'shared', prefix, count, payload: 4096 }).finished),
          );
          const turns = await handle.history.load('shared');
          expect(turns).toHaveLength(2 * count);
          for (const prefix of ['first', 'second']) {
            const own = turns.filter((turn) => turn.runId.startsWith(`${prefix}-`));
            expect(own.map((turn) => turn.runId)).toEqual(Array.from({ length: count }, (_, index) => `${prefix}-${index}`));
            own.forEach((turn, index) => expect(turn).toEqual(childTurn(prefix, index, 4096)));
          }
        },
        PROCESS_TIMEOUT_MS,
      );

      test(
        CHAT_HISTORY_PROCESS_CASES[1],
        async () => {
          const handle = await open();
          const child = childSpec(handle);
          const payload = 512 * 1024;
          let expected: ConversationTurn[] = [];
          for (let round = 0; round < 3; round++) {
            const prefix = `killed${round}`;
            const writer = runChild(child, options.nodeArguments, { id: 'crash', prefix, count: null, payload });
            // Killed right after an acknowledgement, while the next append is being written.
            const acknowledged = await writer.killAfter(2 + round);
            const turns = await handle.history.load('crash');
            const written = turns.slice(expected.length);
            expect(turns.slice(0, expected.length)).toEqual(expected);
            // Every acknowledged turn is there, whole; at most the one in flight besides, and whole too.
            expect(written.length).toBeGreaterThanOrEqual(acknowledged);
            expect(written.length).toBeLessThanOrEqual(acknowledged + 1);
            written.forEach((turn, index) => expect(turn).toEqual(childTurn(prefix, index, payload)));
            // The history goes on after the kill: the next append lands after what was there.
            const after = conformanceTurn(round);
            await handle.history.append('crash', after);
            expected = [...turns, normalizeConversationTurn(after, 'test')];
            expect(await handle.history.load('crash')).toEqual(expected);
          }
        },
        PROCESS_TIMEOUT_MS,
      );
    });

    cases.assertAllKnown(name);
  });
}

/** A valid turn numbered `index`: its run id is `run-<index>`, asked at second `index` of 2025, answered a second later. */
export function conformanceTurn(index: number, overrides: Partial<ConversationTurn> = {}): ConversationTurn {
  return {
    question: `Question ${index}?`,
    searchedQuestion: `Question ${index}?`,
    answer: `Answer ${index} [1].`,
    citations: [{ label: 1, id: `doc-${index}`, sourceType: 'file', sourceName: `notes/${index}.md`, chunkIndex: index }],
    runId: `run-${index}`,
    askedAt: timeOf(index),
    answeredAt: timeOf(index, 1),
    ...overrides,
  };
}

// --- Internal helpers ---

function timeOf(index: number, offsetSeconds = 0): string {
  return new Date(Date.UTC(2025, 0, 1) + (index * 10 + offsetSeconds) * 1000).toISOString();
}

/** The turn a child process appends as its `index`-th: kept in step with CHILD_PROGRAM. */
function childTurn(prefix: string, index: number, payload: number): ConversationTurn {
  return {
    question: `${prefix} question ${index}`,
    searchedQuestion: `${prefix} question ${index}`,
    answer: `${prefix} answer ${index} ${'x'.repeat(payload)}`,
    citations: [{ label: 1, id: `${prefix}-doc-${index}`, sourceType: 'test', sourceName: prefix }],
    runId: `${prefix}-${index}`,
    askedAt: new Date(Date.UTC(2025, 0, 2) + index * 1000).toISOString(),
    answeredAt: new Date(Date.UTC(2025, 0, 2) + index * 1000 + 500).toISOString(),
  };
}

/**
 * The child process: open the history through the given module, append turns (`count` of them, or until killed),
 * print `ack <n>` after each append resolves. Plain JavaScript, so it runs from the published package as it is.
 */
const CHILD_PROGRAM = `
const spec = JSON.parse(process.argv[1]);
const opened = await import(spec.module);
const openHistory = opened[spec.exportName];
if (typeof openHistory !== 'function') throw new Error(spec.module + ' has no function export ' + spec.exportName);
const history = await openHistory(spec.argument);
const filler = 'x'.repeat(spec.payload);
for (let index = 0; spec.count === null || index < spec.count; index++) {
  const asked = Date.UTC(2025, 0, 2) + index * 1000;
  await history.append(spec.id, {
    question: spec.prefix + ' question ' + index,
    searchedQuestion: spec.prefix + ' question ' + index,
    answer: spec.prefix + ' answer ' + index + ' ' + filler,
    citations: [{ label: 1, id: spec.prefix + '-doc-' + index, sourceType: 'test', sourceName: spec.prefix }],
    runId: spec.prefix + '-' + index,
    askedAt: new Date(asked).toISOString(),
    answeredAt: new Date(asked + 500).toISOString(),
  });
  process.stdout.write('ack ' + index + '\\n');
}
await history.close?.();
`;

function childSpec(handle: ChatHistoryHandle): Required<ChatHistoryChildSpec> {
  if (!handle.child) throw new Error('processes: true needs a handle with child: { module, exportName?, argument? }.');
  const module = handle.child.module.startsWith('file:') ? handle.child.module : pathToFileURL(handle.child.module).href;
  return { module, exportName: handle.child.exportName ?? 'openChatHistory', argument: handle.child.argument ?? null };
}

interface ChildRun {
  /** Resolves when the child exits 0 after its appends; rejects with its stderr otherwise. */
  finished: Promise<void>;
  /** SIGKILL the child as soon as it acknowledged `appends` appends; resolves with how many it acknowledged. */
  killAfter(appends: number): Promise<number>;
}

function runChild(
  child: Required<ChatHistoryChildSpec>,
  nodeArguments: string[] = [],
  work: { id: string; prefix: string; count: number | null; payload: number },
): ChildRun {
  const running = spawn(process.execPath, [...nodeArguments, '--input-type=module', '-e', CHILD_PROGRAM, JSON.stringify({ ...child, ...work })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let acknowledged = 0;
  let errors = '';
  let buffered = '';
  let killAt = Number.POSITIVE_INFINITY;
  running.stderr.on('data', (chunk) => (errors += chunk));
  running.stdout.on('data', (chunk) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    acknowledged += lines.filter((line) => line.startsWith('ack ')).length;
    if (acknowledged >= killAt) running.kill('SIGKILL');
  });
  // 'close', not 'exit': every acknowledgement it printed has been read by then.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    running.on('close', (code, signal) => resolve({ code, signal })),
  );
  const finished = exited.then(({ code, signal }) => {
    if (code !== 0) throw new Error(`The child process exited with ${code ?? signal}: ${errors}`);
  });
  // A child killed on purpose rejects `finished`, which nobody awaits then.
  finished.catch(() => undefined);
  return {
    finished,
    async killAfter(appends) {
      killAt = appends;
      if (acknowledged >= killAt) running.kill('SIGKILL');
      const { signal, code } = await exited;
      if (signal !== 'SIGKILL') throw new Error(`The child process exited with ${code ?? signal} before it was killed: ${errors}`);
      return acknowledged;
    },
  };
}
