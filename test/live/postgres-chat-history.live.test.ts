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
import { afterAll, beforeAll, describe } from 'vitest';
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
});
