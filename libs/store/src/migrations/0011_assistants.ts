/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0011: assistants (issue 11), LangGraph Platform's agent configurations over a graph.
 *
 * - `assistants`: one row per (tenant, assistant), the version currently in use (`version`) and
 *   its fields copied in, so reads and searches never join;
 * - `assistant_versions`: one immutable row per version. An update appends version max+1 and makes
 *   it the latest; `setLatest` copies an older version back into `assistants`.
 *
 * MySQL DDL is not transactional: every step tolerates having run before (`if not exists`).
 */
export function assistants(dialect: SqlDialectName): Migration {
  const { id, millis, doc, tableOptions: options } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('assistants')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('assistant_id', id, (c) => c.notNull())
        .addColumn('graph_id', id, (c) => c.notNull())
        .addColumn('name', doc, (c) => c.notNull())
        .addColumn('description', doc)
        .addColumn('config', doc, (c) => c.notNull())
        .addColumn('context', doc, (c) => c.notNull())
        .addColumn('metadata', doc, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', millis, (c) => c.notNull())
        .addColumn('updated_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('assistants_pk', ['tenant_id', 'assistant_id'])
        .$call(options)
        .execute();
      await db.schema
        .createTable('assistant_versions')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('assistant_id', id, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('graph_id', id, (c) => c.notNull())
        .addColumn('name', doc, (c) => c.notNull())
        .addColumn('description', doc)
        .addColumn('config', doc, (c) => c.notNull())
        .addColumn('context', doc, (c) => c.notNull())
        .addColumn('metadata', doc, (c) => c.notNull())
        .addColumn('created_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('assistant_versions_pk', ['tenant_id', 'assistant_id', 'version'])
        .$call(options)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('assistant_versions').ifExists().execute();
      await db.schema.dropTable('assistants').ifExists().execute();
    },
  };
}
