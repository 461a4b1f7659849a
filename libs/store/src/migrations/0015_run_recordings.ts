/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0015: run recordings (issue 17, record and replay). One row per recorded event — a model call
 * (request and answer), a tool call (call and result) or a replay's outcome — so a run costs one
 * insert per model call or tool call and nothing is rewritten as the run grows.
 *
 * `event_key` names the event within its run (`model:<turn>`, `tool:<tool call id>`, `replay`):
 * a step re-executed after a crash writes the same key again, and the primary key keeps the first
 * write. `seq` is a per-row counter (epoch ms × 1000 + a sub-millisecond sequence, given by the
 * writer) that orders the events of a run as they happened.
 */
export function runRecordings(dialect: SqlDialectName): Migration {
  const { id, short, path, millis, doc, tableOptions: options } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('run_recordings')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('run_id', id, (c) => c.notNull())
        .addColumn('event_key', path, (c) => c.notNull())
        .addColumn('seq', millis, (c) => c.notNull())
        .addColumn('kind', short, (c) => c.notNull())
        .addColumn('step', 'integer', (c) => c.notNull())
        .addColumn('payload', doc, (c) => c.notNull())
        .addColumn('created_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('run_recordings_pk', ['tenant_id', 'run_id', 'event_key'])
        .$call(options)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('run_recordings').ifExists().execute();
    },
  };
}
