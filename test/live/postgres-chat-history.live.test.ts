/**
 * The ChatHistory conformance suite for PostgresChatHistory against a server PostgreSQL, with the cases PGlite
 * cannot run: two processes appending at once and a process killed during appends. Runs only when PG_URL is set,
 * and is reported skipped otherwise:
 *
 *   eval "$(../shared/tools/pg-server start)"
 *   npx vitest run test/live/postgres-chat-history.live.test.ts
 *   ../shared/tools/pg-server stop "$PG_SERVER_DIR"
 *
 * Every table it makes is named axon_live_chat_<run>_<n> and dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRag } from '../../app/config/create-rag.ts';
import { PostgresChatHistory } from '../../stores/pgvector/postgres-chat-history.ts';
import { describeChatHistoryConformance } from '../../testing/chat-history.ts';

const url = process.env.PG_URL;
const run = `axon_live_chat_${Date.now().toString(36)}_${randomUUID().slice(0, 8)}`;
const childModule = join(dirname(fileURLToPath(import.meta.url)), '..', 'stores', 'fixtures', 'open-postgres-chat-history.ts');
let tableNumber = 0;

describe.skipIf(!url)('postgres-chat-history against a live PostgreSQL (PG_URL)', () => {
  let admin: pg.Pool;
  const tables: string[] = [];

  beforeAll(() => {
    admin = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    for (const table of tables) await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  });

  describeChatHistoryConformance(
    'postgres-chat-history (live)',
    async () => {
      const table = `${run}_${++tableNumber}`;
      tables.push(table);
      return { history: new PostgresChatHistory({ url, table, maxConnections: 4 }), child: { module: childModule, argument: { url: url!, table } } };
    },
    { processes: true, nodeArguments: ['--import', 'tsx'] },
  );

  it('keeps the turns of a pipeline configured with conversations.history postgres, for the next pipeline to continue', async () => {
    const table = `${run}_${++tableNumber}`;
    tables.push(table);
    const config = { store: { type: 'memory' }, conversations: { history: { type: 'postgres', url, table } } };
    const documents = [
      { content: 'The 2019 survey of the Orvik glacier was led by Dr. Hanne Lund of the Norwegian Polar Institute.', sourceName: 'survey.md' },
      { content: 'Hanne Lund retired in 2021, after thirty years at the Norwegian Polar Institute.', sourceName: 'lund.md' },
    ];
    const first = await createRag(config);
    await first.addDocuments(documents);
    const opened = first.conversation({ id: 'orvik' });
    expect(opened.history).toBeInstanceOf(PostgresChatHistory);
    await opened.ask('Who led the 2019 survey of the Orvik glacier?', { topK: 1 });
    await opened.history.close?.();

    const second = await createRag(config);
    await second.addDocuments(documents);
    const continued = second.conversation({ id: 'orvik' });
    const next = await continued.ask('When did she retire?', { topK: 1 });
    expect(next.searchedQuestion).toMatch(/Hanne Lund/);
    expect((await continued.turns()).map((turn) => turn.question)).toEqual(['Who led the 2019 survey of the Orvik glacier?', 'When did she retire?']);
    const rows = await admin.query(`SELECT count(*)::int AS turns FROM ${table} WHERE conversation_id = 'orvik'`);
    expect(rows.rows[0].turns).toBe(2);
    await continued.history.close?.();
  });
});
