import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runServe } from '../../../app/cli/commands/serve.ts';
import { main } from '../../../app/cli/main.ts';
import { FileChatHistory } from '../../../stores/file-store/file-chat-history.ts';
import { runAxon, type CliResult } from '../../helpers/cli.ts';
import { parseEvents } from '../serve/fixture.ts';

// Conversations on the command line: `ask --conversation` continues one across processes, `chat` is the
// interactive loop over the same, `conversations` lists, shows and deletes them. Turns are kept in the store folder.

const run = promisify(execFile);
let directory: string;

const FIRST = 'Who led the 2019 survey of the Orvik glacier?';
const FOLLOW_UP = 'When did she retire?';

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-conversation-'));
  await mkdir(join(directory, 'notes'));
  const notes: Record<string, string> = {
    'survey.md': 'The 2019 survey of the Orvik glacier was led by Dr. Hanne Lund of the Norwegian Polar Institute.\n',
    'lund.md': 'Hanne Lund retired in 2021, after thirty years at the Norwegian Polar Institute.\n',
    'harbour.md': 'Mette Dahl, the harbour pilot, retired when she turned sixty.\n',
    'glacier.md': 'The Orvik glacier lost four metres of thickness between 2010 and 2019.\n',
  };
  for (const [name, text] of Object.entries(notes)) await writeFile(join(directory, 'notes', name), text);
  expect((await axon('ingest', 'notes')).code).toBe(0);
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('axon ask --conversation', () => {
  it('continues a conversation across processes: the follow-up is searched rewritten, each turn kept in the store folder', async () => {
    const first = await axon('ask', FIRST, '--conversation', 'orvik', '--json');
    expect(first.code).toBe(0);
    const firstJson = JSON.parse(first.stdout);
    expect(firstJson).toMatchObject({ conversationId: 'orvik', searchedQuestion: FIRST, status: 'answered' });
    expect(firstJson.documents[0].sourceName).toBe('notes/survey.md');

    // The second turn in another process, reading the turn the first one kept.
    const { stdout } = await run(
      process.execPath,
      [join(process.cwd(), 'node_modules', '.bin', 'tsx'), join(process.cwd(), 'app', 'cli', 'main.ts'), 'ask', FOLLOW_UP, '--conversation', 'orvik', '--json'],
      {
        cwd: directory,
      },
    );
    const next = JSON.parse(stdout);
    expect(next.conversationId).toBe('orvik');
    expect(next.searchedQuestion).toMatch(/^When did she retire\?.*Hanne Lund/);
    expect(next.documents[0].sourceName).toBe('notes/lund.md');
    expect(next.citations.map((citation: { sourceName: string }) => citation.sourceName)).toContain('notes/lund.md');

    const turns = await new FileChatHistory({ directory: join(directory, '.axon') }).load('orvik');
    expect(turns.map((turn) => [turn.question, turn.searchedQuestion])).toEqual([
      [FIRST, FIRST],
      [FOLLOW_UP, next.searchedQuestion],
    ]);
    expect(turns[1].runId).toBe(next.runId);

    // Without --conversation the follow-up is searched as it stands, and nothing is recorded.
    const alone = JSON.parse((await axon('ask', FOLLOW_UP, '--json')).stdout);
    expect(alone.searchedQuestion).toBe(FOLLOW_UP);
    expect(alone.documents[0].sourceName).toBe('notes/harbour.md');
    expect((await new FileChatHistory({ directory: join(directory, '.axon') }).list()).map((info) => info.id)).toEqual(['orvik']);
  }, 60_000);

  it('prints the searched question beside the answer, and the trace shows the condense stage', async () => {
    await axon('ask', FIRST, '--conversation', 'orvik-text');
    const result = await axon('ask', FOLLOW_UP, '--conversation', 'orvik-text', '--trace');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Searched as: "When did she retire\? .*Hanne Lund.*"$/m);
    expect(result.stdout).toMatch(/condense · offline-condense/);
    // The stored trace keeps the rewrite: axon trace shows it again.
    const stored = await axon('trace', '--last');
    expect(stored.stdout).toMatch(/condense · offline-condense/);
    expect(stored.stdout).toContain('Hanne Lund');
  });

  it('continues a conversation with --agentic, recording the run as a turn', async () => {
    await axon('ask', FIRST, '--conversation', 'orvik-agentic');
    const result = await axon('ask', FOLLOW_UP, '--conversation', 'orvik-agentic', '--agentic', '--json');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.conversationId).toBe('orvik-agentic');
    expect(json.searchedQuestion).toMatch(/Hanne Lund/);
    const turns = await new FileChatHistory({ directory: join(directory, '.axon') }).load('orvik-agentic');
    expect(turns.map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
    expect(turns[1]).toMatchObject({ runId: json.runId, searchedQuestion: json.searchedQuestion });
    const traced = await axon('ask', 'Where did she work?', '--conversation', 'orvik-agentic', '--agentic', '--trace');
    expect(traced.stdout).toMatch(/condense.*"Where did she work\?" → "Where did she work\? .*Hanne Lund.*" \(offline: /);
    expect(traced.stdout).toMatch(/^Searched as: "Where did she work\? .*Hanne Lund/m);
  });

  it('refuses an id that could be a path, before anything runs', async () => {
    const result = await axon('ask', FIRST, '--conversation', '../elsewhere');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--conversation takes an id of 1 to 128 letters/);
    expect(await readdir(join(directory, '.axon', 'conversations'))).not.toContain('elsewhere.jsonl');
  });
});

describe('axon serve --workers', () => {
  it('continues a conversation in the worker threads, kept where axon ask keeps it and listed by the page', async () => {
    let announce: (url: string) => void = () => {};
    const announced = new Promise<string>((resolve) => (announce = resolve));
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const io = { out: (text: string) => announce(/http:\/\/\S+/.exec(text)?.[0] ?? ''), err: () => undefined, errorStream: process.stderr, cwd: directory };
    const exit = runServe([], { port: '0', workers: '2' }, io, stopped);
    try {
      const url = new URL(await announced);
      const token = url.searchParams.get('token')!;
      const ask = async (question: string) => {
        const response = await fetch(`${url.origin}/api/ask?token=${token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question, conversationId: 'served' }),
        });
        return parseEvents(await response.text()).at(-1)!;
      };
      expect((await ask(FIRST)).data).toMatchObject({ conversationId: 'served' });
      const next = await ask(FOLLOW_UP);
      expect(next.event).toBe('result');
      expect((next.data as { searchedQuestion: string }).searchedQuestion).toMatch(/Hanne Lund/);
      const listed = (await (await fetch(`${url.origin}/api/conversations?token=${token}`)).json()) as { conversations: { id: string; turns: number }[] };
      expect(listed.conversations.find((info) => info.id === 'served')?.turns).toBe(2);
    } finally {
      stop();
      expect(await exit).toBe(0);
    }
    const turns = await new FileChatHistory({ directory: join(directory, '.axon') }).load('served');
    expect(turns.map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
  }, 60_000);
});

describe('axon conversations', () => {
  it('lists the kept conversations, shows one turn by turn, and deletes one', async () => {
    await axon('ask', FIRST, '--conversation', 'to-delete');
    const list = await axon('conversations');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^to-delete +1 turn .* "Who led the 2019 survey of the Orvik glacier\?"$/m);
    const listed = JSON.parse((await axon('conversations', '--json')).stdout);
    expect(listed.conversations.find((info: { id: string }) => info.id === 'orvik')).toMatchObject({ turns: 2, firstQuestion: FIRST });

    const show = await axon('conversations', 'show', 'orvik');
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^1\. Who led the 2019 survey/m);
    expect(show.stdout).toMatch(/^2\. When did she retire\?\n {3}searched as: When did she retire\? .*Hanne Lund/m);
    expect(show.stdout).toMatch(/\[1\] notes\/lund\.md/);

    const deleted = await axon('conversations', 'delete', 'to-delete');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe('Deleted conversation to-delete (1 turn).');
    expect((await axon('conversations')).stdout).not.toMatch(/to-delete/);
    const again = await axon('conversations', 'delete', 'to-delete');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/There is no conversation to-delete/);
  });

  it('says how a conversation starts when there is none, and refuses misuse', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'axon-conversation-empty-'));
    try {
      const none = await runAxon(empty, ['conversations']);
      expect(none.code).toBe(0);
      expect(none.stdout).toMatch(/No conversations yet/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
    expect((await axon('conversations', 'rename', 'x')).code).toBe(2);
    expect((await axon('conversations', 'delete')).code).toBe(2);
    expect((await axon('conversations', 'show', '../x')).code).toBe(2);
  });
});

/** `axon chat` with `lines` typed into it (as a terminal, when `terminal`), one after another as each is answered. */
async function chat(argv: string[], script: (type: (line: string) => void, output: () => string) => Promise<void>, terminal = false) {
  const input = Object.assign(new PassThrough(), { isTTY: terminal });
  const written: string[] = [];
  const errors: string[] = [];
  const running = main(['chat', ...argv], {
    out: (text) => written.push(`${text}\n`),
    err: (text) => errors.push(text),
    errorStream: Object.assign(new PassThrough(), { isTTY: false }),
    cwd: directory,
    input,
    write: (text) => written.push(text),
  });
  await script(
    (line) => input.write(line),
    () => written.join('') + errors.join('\n'),
  );
  input.end();
  const code = await running;
  return { code, output: written.join(''), errors: errors.join('\n') };
}

/** Wait until `output()` matches `pattern`. */
async function until(output: () => string, pattern: RegExp): Promise<void> {
  for (let waited = 0; !pattern.test(output()); waited += 10) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${pattern}; the output so far:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('axon chat', () => {
  it('answers each line with the turns before it, with /sources, /trace and /new, and keeps the turns', async () => {
    const result = await chat([], async (type, output) => {
      type(`${FIRST}\n`);
      await until(output, /Sources: .*survey\.md/);
      type(`${FOLLOW_UP}\n`);
      await until(output, /Sources: .*lund\.md/);
      type('/sources\n');
      await until(output, /\[1\] notes\/lund\.md.*\(/);
      type('/trace\n');
      await until(output, /condense · offline-condense/);
      type('/new\n');
      await until(output, /New conversation/);
      type(`${FOLLOW_UP}\n`);
      await until(output, /harbour\.md/);
    });
    expect(result.code).toBe(0);
    const id = /^Conversation (\S+)\./m.exec(result.errors)?.[1];
    expect(id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(result.output).toMatch(/\(searched as: "When did she retire\? .*Hanne Lund.*"\)\n/);
    const history = new FileChatHistory({ directory: join(directory, '.axon') });
    expect((await history.load(id!)).map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
    // After /new the follow-up had nothing before it: searched as asked, in a conversation of its own.
    const fresh = /New conversation (\S+)\./.exec(result.output)?.[1];
    expect((await history.load(fresh!)).map((turn) => turn.searchedQuestion)).toEqual([FOLLOW_UP]);
  }, 60_000);

  it('continues a conversation given with --conversation', async () => {
    const result = await chat(['--conversation', 'orvik'], async (type, output) => {
      type('Where did she work?\n');
      await until(output, /Sources:/);
    });
    expect(result.errors).toMatch(/Continuing conversation orvik \(2 turns\)/);
    expect(result.output).toMatch(/\(searched as: "Where did she work\? .*Hanne Lund/);
    expect((await new FileChatHistory({ directory: join(directory, '.axon') }).load('orvik')).length).toBe(3);
  });

  it('on a terminal, Ctrl-C cancels the answer being written without leaving, and the turn is not recorded', async () => {
    // A chat model that writes its answer slowly, a word at a time, until it is cancelled.
    await writeFile(
      join(directory, 'slow-chat.ts'),
      `import { z } from 'zod';
const ANSWER = 'Dr. Hanne Lund of the Norwegian Polar Institute led the survey [1].';
export function register(registry) {
  registry.register({
    kind: 'chat',
    name: 'slow',
    options: z.object({}).strict(),
    create: () => ({
      name: 'slow-chat',
      complete: async () => ANSWER,
      async *stream(_messages, options) {
        for (const word of ANSWER.split(' ')) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          options?.signal?.throwIfAborted();
          yield word + ' ';
        }
      },
    }),
  });
}
`,
    );
    await writeFile(
      join(directory, 'slow.json'),
      JSON.stringify({ plugins: ['./slow-chat.ts'], chat: { provider: 'slow' }, store: { type: 'file', directory: '.axon' } }),
    );
    const result = await chat(
      ['--config', 'slow.json', '--conversation', 'cancelled'],
      async (type, output) => {
        type(`${FIRST}\r`);
        await until(output, /Dr\. Hanne/);
        type('\u0003');
        await until(output, /\(cancelled: this turn was not recorded\)/);
        type('\u0003');
        await until(output, /\^C \(Ctrl-D leaves\)/);
        type('/sources\r');
        await until(output, /No answer yet\./);
      },
      true,
    );
    expect(result.code).toBe(0);
    expect(result.output).not.toMatch(/Sources:/);
    expect(await new FileChatHistory({ directory: join(directory, '.axon') }).load('cancelled')).toEqual([]);
  }, 60_000);

  // A real pseudo-terminal: util-linux `script` runs the command on one, and what is written to it is typed there.
  const pty = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));
  it.skipIf(pty === undefined)(
    `runs on a real pseudo-terminal: answers, shows the rewrite, Ctrl-C at the prompt stays, Ctrl-D leaves${pty ? '' : ' — SKIPPED: no `script` (util-linux)'}`,
    async () => {
      const command = [process.execPath, join(process.cwd(), 'node_modules', '.bin', 'tsx'), join(process.cwd(), 'app', 'cli', 'main.ts'), 'chat'];
      const child = spawn(pty!, ['-qfec', command.map((part) => `'${part}'`).join(' '), '/dev/null'], { cwd: directory });
      let output = '';
      child.stdout.on('data', (data) => {
        output += String(data);
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      try {
        await until(() => output, /you> /);
        child.stdin.write(`${FIRST}\r`);
        await until(() => output, /Sources: .*survey\.md/);
        child.stdin.write(`${FOLLOW_UP}\r`);
        await until(() => output, /Sources:[\s\S]*Sources: .*lund\.md/);
        child.stdin.write('\u0003');
        await until(() => output, /\^C \(Ctrl-D leaves\)/);
        child.stdin.write('\u0004');
        expect(await exited).toBe(0);
      } finally {
        child.kill();
      }
      expect(output).toMatch(/\(searched as: "When did she retire\? .*Hanne Lund.*"\)/);
      const id = /Conversation (\S+)\./.exec(output)?.[1];
      expect((await new FileChatHistory({ directory: join(directory, '.axon') }).load(id!)).map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
    },
    60_000,
  );

  it('asks with the search options and caller axon ask takes', async () => {
    const result = await chat(['--top-k', '1', '--mode', 'keyword'], async (type, output) => {
      type(`${FIRST}\n`);
      await until(output, /Sources:/);
      type(`${FOLLOW_UP}\n`);
      await until(output, /Sources:[\s\S]*Sources:/);
    });
    const sources = result.output.split('\n').filter((line) => line.startsWith('Sources:'));
    expect(sources).toEqual(['Sources: [1] notes/survey.md#0', 'Sources: [1] notes/lund.md#0']);
    expect((await axon('chat', '--top-k', 'many')).code).toBe(2);
  });

  it('answers with the agentic retriever with --agentic, recording each run as a turn', async () => {
    const result = await chat(['--agentic', '--conversation', 'chat-agentic'], async (type, output) => {
      type(`${FIRST}\n`);
      await until(output, /Sources:/);
      type(`${FOLLOW_UP}\n`);
      await until(output, /Sources:[\s\S]*Sources:/);
      type('/trace\n');
      await until(output, /speculativeRetrieval/);
    });
    expect(result.output).toMatch(/\(searched as: "When did she retire\? .*Hanne Lund.*"\)/);
    expect(result.output).toMatch(/condense .*"When did she retire\?" → /);
    const turns = await new FileChatHistory({ directory: join(directory, '.axon') }).load('chat-agentic');
    expect(turns.map((turn) => turn.question)).toEqual([FIRST, FOLLOW_UP]);
    expect(turns[1].citations.length).toBeGreaterThan(0);
  });

  it('refuses a question on the command line and --json', async () => {
    expect((await axon('chat', 'hello')).code).toBe(2);
    expect((await axon('chat', '--json')).code).toBe(2);
  });
});
