import { formatCitation } from '../../../src/context/evidence.ts';
import type { ChatHistory } from '../../../src/contracts/chat-history.ts';
import { listConversations } from '../../serve/conversation-list.ts';
import { commandHistory, conversationIdOption } from '../conversation-support.ts';
import { loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

const USAGE = 'axon conversations [list] | show <id> | delete <id>';

/**
 * `axon conversations`: the conversations kept in the store folder (or where the configuration keeps them), most
 * recently updated first; `show <id>` prints each turn (the question, the question searched, the answer, its
 * sources), `delete <id>` removes one. `--json` for machines.
 */
export async function runConversations(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  const [action = 'list', id, ...extra] = positionals;
  if (!['list', 'show', 'delete'].includes(action)) throw new UsageError(`Unknown conversations command "${action}": ${USAGE}.`);
  if (action === 'list' ? id !== undefined : id === undefined || extra.length > 0) {
    throw new UsageError(
      action === 'list' ? `conversations list takes no argument: ${USAGE}.` : `conversations ${action} takes one id: axon conversations ${action} <id>.`,
    );
  }
  if (id !== undefined) conversationIdOption(id);
  const pipeline = await loadPipeline(options, io);
  const history = commandHistory(pipeline);
  try {
    if (action === 'list') return await list(history, options, io);
    if (action === 'show') return await show(history, id!, options, io);
    const turns = (await history.load(id!)).length;
    if (!(await history.clear(id!))) {
      io.err(`axon: There is no conversation ${id}; \`axon conversations\` lists them.`);
      return 1;
    }
    if (options.json) io.out(JSON.stringify({ deleted: id, turns }));
    else io.out(`Deleted conversation ${id} (${turns} turn${turns === 1 ? '' : 's'}).`);
    return 0;
  } finally {
    await pipeline.rag.close();
    await history.close?.();
  }
}

// --- Internal helpers ---

async function list(history: ChatHistory, options: CommandOptions, io: CommandIO): Promise<number> {
  const named = await listConversations(history);
  if (options.json) {
    io.out(JSON.stringify({ conversations: named }, null, 2));
    return 0;
  }
  if (named.length === 0) {
    io.out('No conversations yet: `axon chat`, or `axon ask "…" --conversation <id>`, starts one.');
    return 0;
  }
  const width = Math.max(...named.map((info) => info.id.length));
  for (const info of named) {
    const turns = `${info.turns} turn${info.turns === 1 ? '' : 's'}`.padEnd(9);
    io.out(`${info.id.padEnd(width)}  ${turns}  ${info.updatedAt.slice(0, 16).replace('T', ' ')}  ${JSON.stringify(shorten(info.firstQuestion, 70))}`);
  }
  return 0;
}

async function show(history: ChatHistory, id: string, options: CommandOptions, io: CommandIO): Promise<number> {
  const turns = await history.load(id);
  if (turns.length === 0) {
    io.err(`axon: There is no conversation ${id}; \`axon conversations\` lists them.`);
    return 1;
  }
  if (options.json) {
    io.out(JSON.stringify({ id, turns }, null, 2));
    return 0;
  }
  turns.forEach((turn, index) => {
    if (index > 0) io.out('');
    io.out(`${index + 1}. ${turn.question}`);
    if (turn.searchedQuestion !== turn.question) io.out(`   searched as: ${turn.searchedQuestion}`);
    for (const line of turn.answer.trim().split('\n')) io.out(`   ${line}`);
    for (const citation of turn.citations) io.out(`   [${citation.label}] ${formatCitation(citation)}`);
    io.out(`   (run ${turn.runId}, ${turn.answeredAt.slice(0, 19).replace('T', ' ')})`);
  });
  return 0;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
