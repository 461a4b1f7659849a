/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0012: crons (issue 12), LangGraph Platform's scheduled runs. One row per (tenant, cron): the
 * schedule and what each firing runs (`payload`, the run-creation body). The ticks themselves
 * live in the scheduler (BullMQ job schedulers, or the embedded SQLite scheduler); this table is
 * what the API reads, searches and owns. `thread_id` is NULL for a stateless cron.
 *
 * MySQL DDL is not transactional: every step tolerates having run before (`if not exists`).
 */
export function crons(dialect: SqlDialectName): Migration {
  const { mysql, id, short, millis, doc, tableOptions: options } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('crons')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('cron_id', id, (c) => c.notNull())
        .addColumn('assistant_id', id, (c) => c.notNull())
        .addColumn('thread_id', id)
        .addColumn('schedule', doc, (c) => c.notNull())
        .addColumn('timezone', doc)
        .addColumn('end_time', millis)
        .addColumn('payload', doc, (c) => c.notNull())
        .addColumn('metadata', doc, (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('on_run_completed', short)
        .addColumn('user_id', doc)
        .addColumn('created_at', millis, (c) => c.notNull())
        .addColumn('updated_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('crons_pk', ['tenant_id', 'cron_id'])
        .$call(options)
        .execute();
      try {
        await db.schema
          .createIndex('crons_tenant_thread_idx')
          .$call((b) => (mysql ? b : b.ifNotExists()))
          .on('crons')
          .columns(['tenant_id', 'thread_id'])
          .execute();
      } catch (err) {
        // ER_DUP_KEYNAME: the index exists from an interrupted earlier attempt.
        if ((err as { errno?: number }).errno !== 1061) throw err;
      }
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('crons').ifExists().execute();
    },
  };
}
