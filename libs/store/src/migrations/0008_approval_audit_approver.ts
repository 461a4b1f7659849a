/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { addColumnOnce } from './add-column-once.js';

/** The columns this migration adds to `approval_audit`. */
const COLUMNS = ['approver_tenant_id', 'approver_key_id'] as const;

/**
 * 0008: the server-set identity of whoever answered an approval (issue 18: the
 * resume's `by` is only a label the client types). Existing rows get '' — the
 * hash's canonical form leaves empty approver fields out, so their hashes still
 * verify (see `auditEntryHash`). One ALTER per column (SQLite takes one at a
 * time); MySQL DDL is not transactional, so an ALTER that finds its column
 * already there (a run that died midway) is skipped.
 */
export function approvalAuditApprover(dialect: SqlDialectName): Migration {
  // An API key id ("key_" + 12 hex digits) or a tenant id: both ids of at most 128 characters.
  const type = dialect === 'mysql' ? 'varchar(128)' : 'text';
  return {
    async up(db: Kysely<any>) {
      for (const column of COLUMNS) {
        await addColumnOnce(() =>
          db.schema
            .alterTable('approval_audit')
            .addColumn(column, type, (c) => c.notNull().defaultTo(''))
            .execute(),
        );
      }
    },
    async down(db: Kysely<any>) {
      for (const column of [...COLUMNS].reverse()) await db.schema.alterTable('approval_audit').dropColumn(column).execute();
    },
  };
}
