/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0014: the usage ledger (issue 17). One row per (tenant, UTC day, model): the tokens and model
 * calls of that day, incremented by one upsert after each model call. The primary key starts
 * with the tenant and the day, so "this tenant today / this month" is a range of the key; `runs`
 * counts the runs whose first model call that row took.
 *
 * MySQL DDL is not transactional: the step tolerates having run before (`if not exists`).
 */
export function tokenUsage(dialect: SqlDialectName): Migration {
  const { id, millis, tableOptions: options } = columnTypes(dialect);
  const count = dialect === 'mysql' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('token_usage')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        // YYYY-MM-DD (UTC): sorts as a date and compares equal across dialects.
        .addColumn('day', dialect === 'mysql' ? 'char(10)' : 'text', (c) => c.notNull())
        .addColumn('model', id, (c) => c.notNull())
        .addColumn('input_tokens', count, (c) => c.notNull().defaultTo(0))
        .addColumn('output_tokens', count, (c) => c.notNull().defaultTo(0))
        .addColumn('total_tokens', count, (c) => c.notNull().defaultTo(0))
        .addColumn('model_calls', count, (c) => c.notNull().defaultTo(0))
        .addColumn('runs', count, (c) => c.notNull().defaultTo(0))
        .addColumn('updated_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('token_usage_pk', ['tenant_id', 'day', 'model'])
        .$call(options)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('token_usage').ifExists().execute();
    },
  };
}
