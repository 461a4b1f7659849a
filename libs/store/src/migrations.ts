/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
/**
 * Versioned schema migrations, listed in code (no directory scan) so they run
 * the same from `src/` under vitest and from `dist/` in production. Append new
 * entries; never edit an applied one. Names sort in application order.
 *
 * MySQL DDL is not transactional, so every step is written to be re-runnable
 * (`if not exists`, duplicate-index tolerated) in case a process dies midway.
 */
import { sql, type Kysely, type Migration, type MigrationProvider, type RawBuilder, type CreateTableBuilder } from 'kysely';
import type { SqlDialectName } from './schema.js';
import { approvalAuditApprover } from './migrations/0008_approval_audit_approver.js';
import { runLifecycle } from './migrations/0009_run_lifecycle.js';
import { deadLetter } from './migrations/0010_dead_letter.js';
import { assistants } from './migrations/0011_assistants.js';
// Crons (issue 12)
import { crons } from './migrations/0012_crons.js';
// Store items (issue 12)
import { storeItems } from './migrations/0013_store_items.js';
// Usage ledger (issue 17)
import { tokenUsage } from './migrations/0014_token_usage.js';
// Ops console (issue 16)
import { consoleIndexes } from './migrations/0018_console_indexes.js';
// Record and replay (issue 17)
import { runRecordings } from './migrations/0015_run_recordings.js';
// OAuth grants of remote MCP servers (issue 14)
import { mcpOAuth } from './migrations/0019_mcp_oauth.js';
// Recordings' tool sets stored once (issue 9)
import { recordingToolsets } from './migrations/0020_recording_toolsets.js';

/** Longest id (tenant, thread, run, assistant) the schema accepts. */
export const MAX_ID_LENGTH = 128;

interface ColumnTypes {
  /** Identifiers. utf8mb4 VARCHAR(128) is 512 bytes, so (tenant_id, thread_id, created_at) stays far below InnoDB's 3072-byte key limit. */
  id: 'varchar(128)' | 'text';
  /** Short enumerations (status, strategy). */
  short: 'varchar(32)' | 'text';
  /** Epoch milliseconds. */
  millis: 'bigint' | 'integer';
  /** JSON documents and free text; MySQL TEXT stops at 64 KiB, hence LONGTEXT. */
  doc: RawBuilder<unknown> | 'text';
}

function columnTypes(dialect: SqlDialectName): ColumnTypes {
  return dialect === 'mysql'
    ? { id: 'varchar(128)', short: 'varchar(32)', millis: 'bigint', doc: sql`longtext` }
    : { id: 'text', short: 'text', millis: 'integer', doc: 'text' };
}

/**
 * MySQL: binary collation, so ids compare exactly. The server default
 * (utf8mb4_*_ci) would make tenant "Acme" equal to tenant "acme".
 */
function tableOptions(dialect: SqlDialectName) {
  return <T extends CreateTableBuilder<any, any>>(b: T): T =>
    dialect === 'mysql' ? (b.modifyEnd(sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`) as T) : b;
}

async function createIndexOnce(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (err) {
    // ER_DUP_KEYNAME: the index exists from an interrupted earlier attempt.
    if ((err as { errno?: number }).errno !== 1061) throw err;
  }
}

function initialSchema(dialect: SqlDialectName): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('threads')
        .ifNotExists()
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('thread_id', t.id, (c) => c.notNull())
        .addColumn('created_at', t.millis, (c) => c.notNull())
        .addColumn('updated_at', t.millis, (c) => c.notNull())
        .addColumn('status', t.short, (c) => c.notNull())
        .addColumn('metadata', t.doc, (c) => c.notNull())
        .addColumn('state_values', t.doc)
        .addPrimaryKeyConstraint('threads_pk', ['tenant_id', 'thread_id'])
        .$call(tableOptions(dialect))
        .execute();
      await createIndexOnce(() =>
        db.schema
          .createIndex('threads_tenant_created_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('threads')
          .columns(['tenant_id', 'created_at'])
          .execute(),
      );

      await db.schema
        .createTable('runs')
        .ifNotExists()
        // SQLite only auto-increments an `integer primary key`; MySQL takes any integer key.
        .addColumn('seq', dialect === 'mysql' ? 'bigint' : 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('run_id', t.id, (c) => c.notNull().unique())
        .addColumn('thread_id', t.id, (c) => c.notNull())
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('assistant_id', t.id, (c) => c.notNull())
        .addColumn('status', t.short, (c) => c.notNull())
        .addColumn('created_at', t.millis, (c) => c.notNull())
        .addColumn('updated_at', t.millis, (c) => c.notNull())
        .addColumn('started_at', t.millis)
        .addColumn('ended_at', t.millis)
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', t.doc)
        .addColumn('metadata', t.doc, (c) => c.notNull())
        .addColumn('kwargs', t.doc, (c) => c.notNull())
        .addColumn('multitask_strategy', t.short, (c) => c.notNull())
        .$call(tableOptions(dialect))
        .execute();
      await createIndexOnce(() =>
        db.schema
          .createIndex('runs_tenant_thread_created_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('runs')
          .columns(['tenant_id', 'thread_id', 'created_at'])
          .execute(),
      );
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('runs').ifExists().execute();
      await db.schema.dropTable('threads').ifExists().execute();
    },
  };
}

/** All migrations for a dialect, keyed by name. */
/** 0002: the effect ledger, one row per (run, tool call). */
function toolEffects(dialect: SqlDialectName): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tool_effects')
        .ifNotExists()
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('thread_id', t.id, (c) => c.notNull())
        .addColumn('run_id', t.id, (c) => c.notNull())
        .addColumn('tool_call_id', t.id, (c) => c.notNull())
        .addColumn('tool_name', t.id, (c) => c.notNull())
        .addColumn('state', t.short, (c) => c.notNull())
        .addColumn('content', t.doc)
        .addColumn('is_error', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('executions', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('created_at', t.millis, (c) => c.notNull())
        .addColumn('updated_at', t.millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('tool_effects_pk', ['run_id', 'tool_call_id'])
        .$call(tableOptions(dialect))
        .execute();
      await createIndexOnce(() =>
        db.schema
          .createIndex('tool_effects_thread_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('tool_effects')
          .columns(['tenant_id', 'thread_id'])
          .execute(),
      );
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('tool_effects').ifExists().execute();
    },
  };
}

/** 0003: files uploaded to a thread, pending until the next run announces them. */
function threadUploads(dialect: SqlDialectName): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('thread_uploads')
        .ifNotExists()
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('thread_id', t.id, (c) => c.notNull())
        .addColumn('upload_id', t.id, (c) => c.notNull())
        .addColumn('path', t.doc, (c) => c.notNull())
        .addColumn('name', t.doc, (c) => c.notNull())
        .addColumn('original_name', t.doc, (c) => c.notNull())
        .addColumn('type', t.short, (c) => c.notNull())
        .addColumn('mime', t.id, (c) => c.notNull())
        .addColumn('size', t.millis, (c) => c.notNull())
        .addColumn('mismatch', t.doc)
        .addColumn('created_at', t.millis, (c) => c.notNull())
        .addColumn('run_id', t.id)
        .addPrimaryKeyConstraint('thread_uploads_pk', ['tenant_id', 'thread_id', 'upload_id'])
        .$call(tableOptions(dialect))
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('thread_uploads').ifExists().execute();
    },
  };
}

/** 0004: the tool approval audit trail, hash-chained per tenant. */
function approvalAudit(dialect: SqlDialectName): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('approval_audit')
        .ifNotExists()
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('seq', t.millis, (c) => c.notNull())
        .addColumn('thread_id', t.id, (c) => c.notNull())
        .addColumn('run_id', t.id, (c) => c.notNull())
        .addColumn('tool_call_id', t.id, (c) => c.notNull())
        .addColumn('tool_name', t.id, (c) => c.notNull())
        .addColumn('args_sha256', t.short === 'text' ? 'text' : 'varchar(64)', (c) => c.notNull())
        .addColumn('decision', t.short, (c) => c.notNull())
        .addColumn('reason', t.doc, (c) => c.notNull())
        .addColumn('rule', t.doc, (c) => c.notNull())
        .addColumn('risk_level', t.short, (c) => c.notNull())
        .addColumn('decided_by', t.doc, (c) => c.notNull())
        .addColumn('comment', t.doc, (c) => c.notNull())
        .addColumn('created_at', t.millis, (c) => c.notNull())
        .addColumn('prev_hash', t.short === 'text' ? 'text' : 'varchar(64)', (c) => c.notNull())
        .addColumn('hash', t.short === 'text' ? 'text' : 'varchar(64)', (c) => c.notNull())
        .addPrimaryKeyConstraint('approval_audit_pk', ['tenant_id', 'seq'])
        .addUniqueConstraint('approval_audit_call_uq', ['tenant_id', 'run_id', 'tool_call_id'])
        .$call(tableOptions(dialect))
        .execute();
      await db.schema
        .createTable('approval_audit_heads')
        .ifNotExists()
        .addColumn('tenant_id', t.id, (c) => c.notNull().primaryKey())
        .addColumn('seq', t.millis, (c) => c.notNull())
        .addColumn('hash', t.short === 'text' ? 'text' : 'varchar(64)', (c) => c.notNull())
        .$call(tableOptions(dialect))
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('approval_audit_heads').ifExists().execute();
      await db.schema.dropTable('approval_audit').ifExists().execute();
    },
  };
}

/** 0005: counting a tenant's active runs (admission quotas) without scanning its history. */
function runsTenantStatusIndex(dialect: SqlDialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await createIndexOnce(() =>
        db.schema
          .createIndex('runs_tenant_status_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('runs')
          .columns(['tenant_id', 'status'])
          .execute(),
      );
    },
    async down(db: Kysely<any>) {
      await db.schema
        .dropIndex('runs_tenant_status_idx')
        .$call((b) => (dialect === 'mysql' ? b.on('runs') : b))
        .execute();
    },
  };
}

/** 0006: finding runs left in a status across tenants (the orchestrator's orphan sweeper). */
function runsStatusUpdatedIndex(dialect: SqlDialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await createIndexOnce(() =>
        db.schema
          .createIndex('runs_status_updated_idx')
          .$call((b) => (dialect === 'sqlite' ? b.ifNotExists() : b))
          .on('runs')
          .columns(['status', 'updated_at'])
          .execute(),
      );
    },
    async down(db: Kysely<any>) {
      await db.schema
        .dropIndex('runs_status_updated_idx')
        .$call((b) => (dialect === 'mysql' ? b.on('runs') : b))
        .execute();
    },
  };
}

/** 0007: the webhook delivery log, one row per attempt. */
function webhookDeliveries(dialect: SqlDialectName): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhook_deliveries')
        .ifNotExists()
        .addColumn('tenant_id', t.id, (c) => c.notNull())
        .addColumn('delivery_id', t.id, (c) => c.notNull())
        .addColumn('run_id', t.id, (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('at', t.millis, (c) => c.notNull())
        .addColumn('outcome', t.short, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', t.doc)
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_deliveries_pk', ['tenant_id', 'delivery_id', 'attempt'])
        .$call(tableOptions(dialect))
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('webhook_deliveries').ifExists().execute();
    },
  };
}

export function storeMigrations(dialect: SqlDialectName): Record<string, Migration> {
  return {
    '0001_threads_runs': initialSchema(dialect),
    '0002_tool_effects': toolEffects(dialect),
    '0003_thread_uploads': threadUploads(dialect),
    '0004_approval_audit': approvalAudit(dialect),
    '0005_runs_tenant_status': runsTenantStatusIndex(dialect),
    '0006_runs_status_updated': runsStatusUpdatedIndex(dialect),
    '0007_webhook_deliveries': webhookDeliveries(dialect),
    '0008_approval_audit_approver': approvalAuditApprover(dialect),
    '0009_run_lifecycle': runLifecycle(dialect),
    '0010_dead_letter': deadLetter(dialect),
    '0011_assistants': assistants(dialect),
    // Crons (issue 12)
    '0012_crons': crons(dialect),
    // Store items (issue 12)
    '0013_store_items': storeItems(dialect),
    '0014_token_usage': tokenUsage(dialect),
    // Record and replay (issue 17)
    '0015_run_recordings': runRecordings(dialect),
    // Ops console (issue 16)
    '0018_console_indexes': consoleIndexes(dialect),
    // OAuth grants of remote MCP servers (issue 14)
    '0019_mcp_oauth': mcpOAuth(dialect),
    // Run recordings' tool sets, stored once (issue 9)
    '0020_recording_toolsets': recordingToolsets(dialect),
  };
}

export function migrationProvider(dialect: SqlDialectName): MigrationProvider {
  return { getMigrations: async () => storeMigrations(dialect) };
}

export const MIGRATION_TABLE = 'agentloop_store_migration';
export const MIGRATION_LOCK_TABLE = 'agentloop_store_migration_lock';
