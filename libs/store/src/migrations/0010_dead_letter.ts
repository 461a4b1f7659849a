/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { addColumnOnce } from './add-column-once.js';

/**
 * 0010: dead-lettered runs (issue 10). A run whose queue job failed for good without the run
 * recording an outcome (its worker died more than RUN_MAX_STALLED times: a poison run), or whose
 * job is gone, ends `error` and dead-lettered (`RunLifecycle.deadLetter`):
 *
 * - `runs.dead_letter_reason`, `runs.dead_lettered_at`: set while the run is dead-lettered (listed
 *   by `GET /runs/dead-letter`, newest first: index (tenant_id, dead_lettered_at));
 * - `runs.redrives`: times the run was re-driven (`RunLifecycle.redrive`); its current queue job
 *   id is `runJobId(run)` (the run id, then `<run id>-redrive-<n>`: a new job, attempts reset).
 *
 * MySQL DDL is not transactional: each step tolerates having run before.
 */
export function deadLetter(dialect: SqlDialectName): Migration {
  const doc = dialect === 'mysql' ? sql`longtext` : 'text';
  const millis = dialect === 'mysql' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>) {
      await addColumnOnce(() =>
        db.schema
          .alterTable('runs')
          .addColumn('dead_letter_reason', doc as 'text')
          .execute(),
      );
      await addColumnOnce(() => db.schema.alterTable('runs').addColumn('dead_lettered_at', millis).execute());
      await addColumnOnce(() =>
        db.schema
          .alterTable('runs')
          .addColumn('redrives', 'integer', (c) => c.notNull().defaultTo(0))
          .execute(),
      );
      try {
        await db.schema
          .createIndex('runs_tenant_dead_letter_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('runs')
          .columns(['tenant_id', 'dead_lettered_at'])
          .execute();
      } catch (err) {
        // ER_DUP_KEYNAME: created by an interrupted earlier attempt.
        if ((err as { errno?: number }).errno !== 1061) throw err;
      }
    },
    async down(db: Kysely<any>) {
      await db.schema
        .dropIndex('runs_tenant_dead_letter_idx')
        .$call((b) => (dialect === 'mysql' ? b.on('runs') : b))
        .execute();
      await db.schema.alterTable('runs').dropColumn('redrives').execute();
      await db.schema.alterTable('runs').dropColumn('dead_lettered_at').execute();
      await db.schema.alterTable('runs').dropColumn('dead_letter_reason').execute();
    },
  };
}
