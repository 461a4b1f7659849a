/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';

/** The indexes 0018 adds: the ops console's reads across tenants (issue 16). */
const INDEXES = [
  // `GET /runs` of an admin (every tenant's runs, newest first).
  { name: 'runs_created_idx', table: 'runs', columns: ['created_at'] },
  // The console's live feed: runs changed since its last look.
  { name: 'runs_updated_idx', table: 'runs', columns: ['updated_at'] },
  // `GET /approvals/pending` of an admin: every tenant's interrupted threads.
  { name: 'threads_status_updated_idx', table: 'threads', columns: ['status', 'updated_at'] },
] as const;

/**
 * 0018: indexes for the ops console (issue 16). The console lists runs and pending approvals
 * across tenants (an admin key) and polls for runs changed since a point in time; without these
 * the reads would scan the whole runs and threads tables. No column changes.
 *
 * MySQL DDL is not transactional: each index tolerates having been created before.
 */
export function consoleIndexes(dialect: SqlDialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const ix of INDEXES) {
        try {
          await db.schema
            .createIndex(ix.name)
            .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
            .on(ix.table)
            .columns([...ix.columns])
            .execute();
        } catch (err) {
          // ER_DUP_KEYNAME: created by an interrupted earlier attempt.
          if ((err as { errno?: number }).errno !== 1061) throw err;
        }
      }
    },
    async down(db: Kysely<any>) {
      for (const ix of INDEXES) {
        await db.schema
          .dropIndex(ix.name)
          .$call((b) => (dialect === 'mysql' ? b.on(ix.table) : b))
          .execute();
      }
    },
  };
}
