/** Helpers shared by the pgvector store's suites. */
import type pg from 'pg';
import { PGVECTOR_REGISTRY_TABLE } from '../../../stores/pgvector/pgvector-store.ts';

/** Drop a store's table and its registry row (table names in the tests are plain identifiers). */
export async function dropTable(pool: pg.Pool, table: string): Promise<void> {
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  if ((await pool.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [PGVECTOR_REGISTRY_TABLE])).rows[0].found) {
    await pool.query(`DELETE FROM ${PGVECTOR_REGISTRY_TABLE} WHERE table_name = $1`, [table]);
  }
}
