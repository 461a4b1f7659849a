/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0020: the tool sets of run recordings (issue 9: recording a run nearly free). A recorded model
 * call used to hold every offered tool's JSON schema (~12 KB for the default tools), the same from
 * one call to the next and from one run to the next; now its row refers to the set by hash and the
 * set is stored once per tenant here (`recording-storage.ts`). Per tenant, because a set can hold a
 * tenant's own MCP tools. Rows are never updated: a hash names one content. `run_recordings` is
 * unchanged — rows written before 0020 hold their full requests and read as they did.
 */
export function recordingToolsets(dialect: SqlDialectName): Migration {
  const { id, millis, doc, tableOptions: options } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('run_recording_toolsets')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('toolset_hash', id, (c) => c.notNull())
        .addColumn('tools', doc, (c) => c.notNull())
        .addColumn('created_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('run_recording_toolsets_pk', ['tenant_id', 'toolset_hash'])
        .$call(options)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('run_recording_toolsets').ifExists().execute();
    },
  };
}
