/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { addColumnOnce } from './add-column-once.js';

/**
 * 0009: the run lifecycle in the database (issue 10).
 *
 * - `threads.active_run_id`: the run holding the thread. Admission takes it with a guarded update
 *   (`... where active_run_id is null`), so two gateway replicas racing on one thread cannot both
 *   start a run; the end of that run releases it or hands it to the thread's next deferred run.
 * - `runs.deferred`: 1 while a run admitted with multitask_strategy "enqueue" waits for its thread
 *   (durable: it no longer waits in a gateway's memory).
 * - `runs.job`: the run's queue job as admitted, so whichever process ends the run before it can
 *   enqueue the next one, and a sweeper can enqueue a job lost between commit and enqueue.
 *
 * Existing threads with a pending or running run are given their oldest such run as holder.
 * MySQL DDL is not transactional: each step tolerates having run before.
 */
export function runLifecycle(dialect: SqlDialectName): Migration {
  const id = dialect === 'mysql' ? 'varchar(128)' : 'text';
  const doc = dialect === 'mysql' ? sql`longtext` : 'text';
  return {
    async up(db: Kysely<any>) {
      await addColumnOnce(() => db.schema.alterTable('threads').addColumn('active_run_id', id).execute());
      await addColumnOnce(() =>
        db.schema
          .alterTable('runs')
          .addColumn('deferred', 'integer', (c) => c.notNull().defaultTo(0))
          .execute(),
      );
      await addColumnOnce(() =>
        db.schema
          .alterTable('runs')
          .addColumn('job', doc as 'text')
          .execute(),
      );
      try {
        await db.schema
          .createIndex('runs_thread_deferred_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('runs')
          .columns(['tenant_id', 'thread_id', 'deferred', 'seq'])
          .execute();
      } catch (err) {
        // ER_DUP_KEYNAME: created by an interrupted earlier attempt.
        if ((err as { errno?: number }).errno !== 1061) throw err;
      }
      await sql`update threads set active_run_id = (
          select r.run_id from runs r
          where r.tenant_id = threads.tenant_id and r.thread_id = threads.thread_id and r.status in ('pending', 'running')
          order by r.seq limit 1)
        where active_run_id is null`.execute(db);
    },
    async down(db: Kysely<any>) {
      await db.schema
        .dropIndex('runs_thread_deferred_idx')
        .$call((b) => (dialect === 'mysql' ? b.on('runs') : b))
        .execute();
      await db.schema.alterTable('runs').dropColumn('job').execute();
      await db.schema.alterTable('runs').dropColumn('deferred').execute();
      await db.schema.alterTable('threads').dropColumn('active_run_id').execute();
    },
  };
}
