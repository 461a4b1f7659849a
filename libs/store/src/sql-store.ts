import { Migrator, sql, type Kysely, type Selectable } from 'kysely';
import { AgentLoopError, InvalidArgumentError, errorMessage, sleep } from '@agentloop/core';
import { MAX_ID_LENGTH, MIGRATION_LOCK_TABLE, MIGRATION_TABLE, migrationProvider } from './migrations.js';
import type { ApprovalAuditTable, Database, RunsTable, SqlDialectName, ThreadsTable, ThreadUploadsTable, ToolEffectsTable } from './schema.js';
import { AUDIT_GENESIS_HASH, auditEntryHash } from './audit-hash.js';
import type {
  JsonObject,
  NewThread,
  RunRecord,
  RunStatusName,
  Store,
  ThreadPatch,
  ThreadRecord,
  ThreadStatus,
  ToolEffect,
  ToolEffectKey,
  ToolEffectState,
  NewUpload,
  UploadRecord,
  AuditDecision,
  AuditEntry,
  AuditHead,
  AuditListFilter,
  AuditRiskLevel,
  NewAuditEntry,
  WebhookAttempt,
} from './types.js';

export interface SqlStoreOptions {
  dialect: SqlDialectName;
  db: Kysely<Database>;
  /** How long `migrate()` keeps retrying while another SQLite connection holds the write lock (default 60 s). */
  migrateTimeoutMs?: number;
  /** Clock in epoch ms (tests). */
  now?: () => number;
}

/** Page size when `searchThreads` filters on metadata in the layer. */
const SCAN_PAGE = 200;

/**
 * The `Store` over Kysely: the same queries for MySQL/MariaDB and SQLite,
 * with the few dialect differences (duplicate-key detection, migration lock)
 * handled here. Every statement filters on `tenant_id`.
 */
export class SqlStore implements Store {
  readonly dialect: SqlDialectName;
  /** The Kysely instance, for callers that need their own queries on the same connection pool. */
  readonly db: Kysely<Database>;
  private readonly now: () => number;
  private readonly migrateTimeoutMs: number;
  private closed: Promise<void> | undefined;

  constructor(opts: SqlStoreOptions) {
    this.dialect = opts.dialect;
    this.db = opts.db;
    this.now = opts.now ?? Date.now;
    this.migrateTimeoutMs = opts.migrateTimeoutMs ?? 60_000;
  }

  // -------------------------------------------------------------------------
  // Migrations

  async migrate(): Promise<void> {
    if (this.dialect === 'mysql') {
      // Kysely's MySQL adapter serialises concurrent migrators with GET_LOCK.
      this.check(await this.migrator(false).migrateToLatest());
      return;
    }
    // Kysely's SQLite adapter takes no lock (it assumes one connection). Several
    // processes on one file serialise on BEGIN IMMEDIATE instead, which holds the
    // database write lock for the whole run; a loser waits and retries.
    const deadline = Date.now() + this.migrateTimeoutMs;
    for (;;) {
      try {
        await sql`begin immediate`.execute(this.db);
      } catch (err) {
        if (isSqliteBusy(err) && Date.now() < deadline) {
          await sleep(25 + Math.random() * 50);
          continue;
        }
        throw new AgentLoopError('UNAVAILABLE', `Store migration could not lock the SQLite database: ${errorMessage(err)}`, { cause: err });
      }
      try {
        this.check(await this.migrator(true).migrateToLatest());
        await sql`commit`.execute(this.db);
        return;
      } catch (err) {
        await sql`rollback`.execute(this.db).catch(() => undefined);
        throw err;
      }
    }
  }

  private migrator(disableTransactions: boolean): Migrator {
    return new Migrator({
      db: this.db,
      provider: migrationProvider(this.dialect),
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
      disableTransactions,
    });
  }

  private check(res: { error?: unknown; results?: readonly { migrationName: string; status: string }[] }): void {
    if (res.error === undefined) return;
    const failed = res.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new AgentLoopError('INTERNAL', `Store migration ${failed ?? ''} failed: ${errorMessage(res.error)}`.replace('  ', ' '), { cause: res.error });
  }

  // -------------------------------------------------------------------------
  // Effect ledger

  async claimToolEffect(key: ToolEffectKey): Promise<{ effect: ToolEffect; created: boolean }> {
    checkId('tenantId', key.tenantId);
    checkId('threadId', key.threadId);
    checkId('runId', key.runId);
    checkId('toolCallId', key.toolCallId);
    const now = this.now();
    let created = true;
    try {
      await this.db
        .insertInto('tool_effects')
        .values({
          tenant_id: key.tenantId,
          thread_id: key.threadId,
          run_id: key.runId,
          tool_call_id: key.toolCallId,
          tool_name: key.toolName,
          state: 'started',
          content: null,
          is_error: 0,
          executions: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      created = false;
    }
    const effect = await this.getToolEffect(key.tenantId, key.runId, key.toolCallId);
    if (!effect) throw new AgentLoopError('CONFLICT', `Tool call ${key.toolCallId} of run ${key.runId} belongs to another tenant`);
    return { effect, created };
  }

  async restartToolEffect(tenantId: string, runId: string, toolCallId: string): Promise<void> {
    await this.db
      .updateTable('tool_effects')
      .set((eb) => ({ executions: eb('executions', '+', 1), updated_at: this.now() }))
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .where('tool_call_id', '=', toolCallId)
      .where('state', '=', 'started')
      .execute();
  }

  async completeToolEffect(tenantId: string, runId: string, toolCallId: string, result: { content: string; isError: boolean }): Promise<ToolEffect> {
    await this.db
      .updateTable('tool_effects')
      .set({ state: 'completed', content: result.content, is_error: result.isError ? 1 : 0, updated_at: this.now() })
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .where('tool_call_id', '=', toolCallId)
      .where('state', '=', 'started')
      .execute();
    const effect = await this.getToolEffect(tenantId, runId, toolCallId);
    if (!effect) throw new AgentLoopError('NOT_FOUND', `Tool call ${toolCallId} of run ${runId} was never claimed`);
    return effect;
  }

  async listToolEffects(tenantId: string, runId: string): Promise<ToolEffect[]> {
    const rows = await this.db
      .selectFrom('tool_effects')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .orderBy('created_at')
      .orderBy('tool_call_id')
      .execute();
    return rows.map(toEffect);
  }

  // -------------------------------------------------------------------------
  // Approval audit trail

  async appendAuditEntry(input: NewAuditEntry): Promise<{ entry: AuditEntry; duplicate: boolean }> {
    const e = auditInput(input);
    const head0 = { tenant_id: e.tenantId, seq: 0, hash: AUDIT_GENESIS_HASH };
    if (this.dialect === 'mysql') {
      // The head row exists before any append locks it (created outside the transaction: inserting it
      // inside would take gap locks that deadlock concurrent first appends).
      await this.db.insertInto('approval_audit_heads').ignore().values(head0).execute();
      return this.writeTransaction((trx) => this.appendLocked(trx, e, true));
    }
    // SQLite: BEGIN IMMEDIATE serializes appends from several connections to one file.
    return this.sqliteImmediate(async (conn) => {
      await conn.insertInto('approval_audit_heads').values(head0).onConflict((oc) => oc.column('tenant_id').doNothing()).execute();
      return this.appendLocked(conn, e, false);
    });
  }

  writeStatement<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return fn(this.db);
  }

  async writeTransaction<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    if (this.dialect === 'sqlite') return this.sqliteImmediate(fn);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute(fn);
      } catch (err) {
        // Deadlock or lock wait timeout: the transaction was rolled back; try again.
        const errno = (err as { errno?: number }).errno;
        if ((errno === 1213 || errno === 1205) && attempt < 10) {
          await sleep(5 + Math.random() * 20 * attempt);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * SQLite: one transaction that takes the write lock up front (BEGIN IMMEDIATE), so writers on
   * several connections to one file queue instead of failing on a lock upgrade. better-sqlite3 is
   * synchronous: a busy timeout would block this whole process while another connection of the
   * same process holds the lock, so the wait for the lock is done asynchronously instead.
   */
  /** The connection's busy_timeout as configured (see sqliteImmediate). */
  private sqliteBusyTimeoutMs: number | undefined;

  private sqliteImmediate<T>(fn: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.connection().execute(async (conn) => {
      const deadline = Date.now() + 30_000;
      // Read once: only this method changes it, and it always puts it back (a statement less per transaction).
      this.sqliteBusyTimeoutMs ??= (await sql<{ timeout: number }>`pragma busy_timeout`.execute(conn)).rows[0]?.timeout ?? 5000;
      const saved = this.sqliteBusyTimeoutMs;
      await sql.raw('pragma busy_timeout = 0').execute(conn);
      try {
        for (;;) {
          try {
            await sql`begin immediate`.execute(conn);
            break;
          } catch (err) {
            if (!isSqliteBusy(err) || Date.now() > deadline) throw err;
            await sleep(2 + Math.random() * 10);
          }
        }
      } finally {
        await sql.raw(`pragma busy_timeout = ${Math.max(0, Math.floor(Number(saved)))}`).execute(conn);
      }
      try {
        const out = await fn(conn);
        await sql`commit`.execute(conn);
        return out;
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw err;
      }
    });
  }

  private async appendLocked(db: Kysely<Database>, e: ValidAuditEntry, forUpdate: boolean): Promise<{ entry: AuditEntry; duplicate: boolean }> {
    let q = db.selectFrom('approval_audit_heads').selectAll().where('tenant_id', '=', e.tenantId);
    if (forUpdate) q = q.forUpdate();
    const head = await q.executeTakeFirstOrThrow();
    const existing = await db
      .selectFrom('approval_audit')
      .selectAll()
      .where('tenant_id', '=', e.tenantId)
      .where('run_id', '=', e.runId)
      .where('tool_call_id', '=', e.toolCallId)
      .executeTakeFirst();
    if (existing) return { entry: toAudit(existing), duplicate: true };
    const entry: AuditEntry = { ...e, seq: Number(head.seq) + 1, createdAtMs: this.now(), prevHash: head.hash, hash: '' };
    entry.hash = auditEntryHash(entry);
    await db
      .insertInto('approval_audit')
      .values({
        tenant_id: entry.tenantId,
        seq: entry.seq,
        thread_id: entry.threadId,
        run_id: entry.runId,
        tool_call_id: entry.toolCallId,
        tool_name: entry.toolName,
        args_sha256: entry.argsSha256,
        decision: entry.decision,
        reason: entry.reason,
        rule: entry.rule,
        risk_level: entry.riskLevel,
        decided_by: entry.decidedBy,
        comment: entry.comment,
        approver_tenant_id: entry.approverTenantId,
        approver_key_id: entry.approverKeyId,
        created_at: entry.createdAtMs,
        prev_hash: entry.prevHash,
        hash: entry.hash,
      })
      .execute();
    await db.updateTable('approval_audit_heads').set({ seq: entry.seq, hash: entry.hash }).where('tenant_id', '=', e.tenantId).execute();
    return { entry, duplicate: false };
  }

  async recordWebhookAttempt(a: WebhookAttempt): Promise<void> {
    try {
      await this.db
        .insertInto('webhook_deliveries')
        .values({
          tenant_id: a.tenantId,
          delivery_id: a.deliveryId,
          run_id: a.runId,
          attempt: a.attempt,
          at: a.at.getTime(),
          outcome: a.outcome,
          status_code: a.statusCode,
          error: a.error === null ? null : a.error.slice(0, 4000),
          duration_ms: Math.max(0, Math.round(a.durationMs)),
        })
        .execute();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async listWebhookAttempts(tenantId: string, deliveryId: string): Promise<WebhookAttempt[]> {
    const rows = await this.db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', tenantId).where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
    return rows.map((r) => ({
      tenantId: r.tenant_id,
      deliveryId: r.delivery_id,
      runId: r.run_id,
      attempt: Number(r.attempt),
      at: millisToDate(r.at),
      outcome: r.outcome as WebhookAttempt['outcome'],
      statusCode: r.status_code === null ? null : Number(r.status_code),
      error: r.error,
      durationMs: Number(r.duration_ms),
    }));
  }

  async getAuditEntry(tenantId: string, seq: number): Promise<AuditEntry | undefined> {
    if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
    const row = await this.db.selectFrom('approval_audit').selectAll().where('tenant_id', '=', tenantId).where('seq', '=', seq).executeTakeFirst();
    return row ? toAudit(row) : undefined;
  }

  async getAuditHead(tenantId: string): Promise<AuditHead | undefined> {
    const row = await this.db.selectFrom('approval_audit_heads').select(['seq', 'hash']).where('tenant_id', '=', tenantId).executeTakeFirst();
    return row ? { seq: Number(row.seq), hash: row.hash } : undefined;
  }

  async listAuditEntries(tenantId: string, filter: AuditListFilter = {}): Promise<AuditEntry[]> {
    const rows = await this.db
      .selectFrom('approval_audit')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', Math.max(0, Math.floor(filter.afterSeq ?? 0)))
      .$if(filter.runId !== undefined && filter.runId !== '', (q) => q.where('run_id', '=', filter.runId as string))
      .$if(filter.threadId !== undefined && filter.threadId !== '', (q) => q.where('thread_id', '=', filter.threadId as string))
      .orderBy('seq')
      .limit(Math.min(10_000, Math.max(1, Math.floor(filter.limit ?? 100))))
      .execute();
    return rows.map(toAudit);
  }

  // -------------------------------------------------------------------------
  // Uploads

  async addUpload(u: NewUpload): Promise<UploadRecord> {
    checkId('tenantId', u.tenantId);
    checkId('threadId', u.threadId);
    checkId('uploadId', u.uploadId);
    const row = {
      tenant_id: u.tenantId,
      thread_id: u.threadId,
      upload_id: u.uploadId,
      path: u.path,
      name: u.name,
      original_name: u.originalName,
      type: u.type,
      mime: u.mime,
      size: u.size,
      mismatch: u.mismatch,
      created_at: this.now(),
      run_id: null,
    };
    await this.db.insertInto('thread_uploads').values(row).execute();
    return toUpload(row);
  }

  async claimUploads(tenantId: string, threadId: string, runId: string): Promise<UploadRecord[]> {
    checkId('runId', runId);
    // One UPDATE claims every pending row: concurrent claims by two runs split nothing twice.
    await this.db
      .updateTable('thread_uploads')
      .set({ run_id: runId })
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .where('run_id', 'is', null)
      .execute();
    const rows = await this.db
      .selectFrom('thread_uploads')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .where('run_id', '=', runId)
      .orderBy('created_at')
      .orderBy('upload_id')
      .execute();
    return rows.map(toUpload);
  }

  async listUploads(tenantId: string, threadId: string): Promise<UploadRecord[]> {
    const rows = await this.db
      .selectFrom('thread_uploads')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .orderBy('created_at')
      .orderBy('upload_id')
      .execute();
    return rows.map(toUpload);
  }

  private async getToolEffect(tenantId: string, runId: string, toolCallId: string): Promise<ToolEffect | undefined> {
    const row = await this.db
      .selectFrom('tool_effects')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .where('tool_call_id', '=', toolCallId)
      .executeTakeFirst();
    return row && toEffect(row);
  }

  // -------------------------------------------------------------------------
  // Threads

  async createThread(t: NewThread): Promise<ThreadRecord> {
    checkId('tenantId', t.tenantId);
    checkId('threadId', t.threadId);
    const now = this.now();
    try {
      await this.db
        .insertInto('threads')
        .values({
          tenant_id: t.tenantId,
          thread_id: t.threadId,
          created_at: now,
          updated_at: now,
          status: 'idle',
          metadata: JSON.stringify(t.metadata ?? {}),
          state_values: null,
        })
        .execute();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const thread = await this.getThread(t.tenantId, t.threadId);
    if (!thread) throw new AgentLoopError('INTERNAL', `Thread ${t.threadId} vanished right after it was created`);
    return thread;
  }

  async getThread(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const row = await this.db
      .selectFrom('threads')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .executeTakeFirst();
    return row && toThread(row);
  }

  async updateThread(tenantId: string, threadId: string, patch: ThreadPatch): Promise<void> {
    await this.db
      .updateTable('threads')
      .set({
        updated_at: this.now(),
        ...(patch.metadata !== undefined ? { metadata: JSON.stringify(patch.metadata) } : {}),
      })
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .execute();
  }

  async deleteThread(tenantId: string, threadId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('tool_effects').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute();
      await trx.deleteFrom('thread_uploads').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute();
      await trx.deleteFrom('runs').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute();
      const res = await trx.deleteFrom('threads').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).executeTakeFirst();
      return res.numDeletedRows > 0n;
    });
  }

  /**
   * Newest first. A metadata filter matches threads whose top-level keys equal
   * the given values (JSON equality); it is applied in the layer, scanning the
   * tenant's threads page by page, so `offset`/`limit` count matches.
   */
  async searchThreads(
    tenantId: string,
    opts: { limit: number; offset: number; metadata?: JsonObject; status?: ThreadStatus },
  ): Promise<ThreadRecord[]> {
    const base = this.db
      .selectFrom('threads')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$if(opts.status !== undefined, (q) => q.where('status', '=', opts.status as ThreadStatus))
      .orderBy('created_at', 'desc')
      .orderBy('thread_id', 'asc');
    const limit = Math.max(0, Math.floor(opts.limit));
    const offset = Math.max(0, Math.floor(opts.offset));
    const wanted = Object.entries(opts.metadata ?? {});
    if (limit === 0) return [];
    if (wanted.length === 0) {
      const rows = await base.limit(limit).offset(offset).execute();
      return rows.map(toThread);
    }
    const out: ThreadRecord[] = [];
    let toSkip = offset;
    for (let page = 0; ; page++) {
      const rows = await base.limit(SCAN_PAGE).offset(page * SCAN_PAGE).execute();
      for (const row of rows) {
        const thread = toThread(row);
        if (!wanted.every(([k, v]) => jsonEqual(thread.metadata[k], v))) continue;
        if (toSkip > 0) {
          toSkip--;
          continue;
        }
        out.push(thread);
        if (out.length === limit) return out;
      }
      if (rows.length < SCAN_PAGE) return out;
    }
  }

  // -------------------------------------------------------------------------
  // Runs

  async getRun(tenantId: string, runId: string): Promise<RunRecord | undefined> {
    const row = await this.db.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId).where('run_id', '=', runId).executeTakeFirst();
    return row && toRun(row);
  }

  /** Newest first (ties in the same millisecond: last inserted first). */
  async listRuns(tenantId: string, threadId: string, opts: { limit?: number; offset?: number; status?: RunStatusName } = {}): Promise<RunRecord[]> {
    const rows = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .$if(opts.status !== undefined, (q) => q.where('status', '=', opts.status as RunStatusName))
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(Math.max(0, Math.floor(opts.limit ?? 10)))
      .offset(Math.max(0, Math.floor(opts.offset ?? 0)))
      .execute();
    return rows.map(toRun);
  }

  async listRunsInStatus(status: RunStatusName, updatedBefore: Date, limit: number): Promise<RunRecord[]> {
    const rows = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('status', '=', status)
      .where('updated_at', '<', updatedBefore.getTime())
      .orderBy('updated_at')
      .limit(Math.max(1, Math.floor(limit)))
      .execute();
    return rows.map(toRun);
  }

  async countActiveRuns(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', ['pending', 'running'])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  close(): Promise<void> {
    return (this.closed ??= this.db.destroy());
  }
}

// ---------------------------------------------------------------------------
// Row mapping

function parseObject(text: string, what: string): JsonObject {
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AgentLoopError('INTERNAL', `Stored ${what} is not a JSON object`);
  }
  return value as JsonObject;
}

const millisToDate = (v: number | string | bigint): Date => new Date(Number(v));
const optionalDate = (v: number | string | bigint | null): Date | null => (v === null ? null : millisToDate(v));

function toEffect(row: Selectable<ToolEffectsTable>): ToolEffect {
  return {
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    state: row.state as ToolEffectState,
    content: row.content,
    isError: Number(row.is_error) === 1,
    executions: Number(row.executions),
    createdAt: millisToDate(row.created_at),
    updatedAt: millisToDate(row.updated_at),
  };
}

const AUDIT_DECISIONS: ReadonlySet<string> = new Set<AuditDecision>(['approved', 'rejected', 'denied']);
const AUDIT_RISK_LEVELS: ReadonlySet<string> = new Set<AuditRiskLevel>(['low', 'medium', 'high', 'critical', 'unspecified']);
/** Longest free-text field of an audit entry (reason, rule, decided_by, comment), in UTF-16 units. */
const AUDIT_TEXT_MAX = 16_000;

/**
 * Validates a new entry and makes its text storable as-is: lone UTF-16
 * surrogates (which a database would replace, silently changing the hashed
 * content) become U+FFFD, and long texts are cut without splitting a pair.
 */
/** A new entry after `auditInput`: checked, storable, the approver identity filled in ('' when none). */
type ValidAuditEntry = Omit<AuditEntry, 'seq' | 'createdAtMs' | 'prevHash' | 'hash'>;

function auditInput(e: NewAuditEntry): ValidAuditEntry {
  checkId('tenantId', e.tenantId);
  checkId('threadId', e.threadId);
  checkId('runId', e.runId);
  checkId('toolCallId', e.toolCallId);
  checkId('toolName', wellFormed(e.toolName));
  if (!/^[0-9a-f]{64}$/.test(e.argsSha256)) throw new InvalidArgumentError('Invalid argsSha256: expected 64 lowercase hex digits');
  if (!AUDIT_DECISIONS.has(e.decision)) throw new InvalidArgumentError(`Invalid decision ${JSON.stringify(e.decision)}: expected approved, rejected or denied`);
  if (!AUDIT_RISK_LEVELS.has(e.riskLevel)) throw new InvalidArgumentError(`Invalid riskLevel ${JSON.stringify(e.riskLevel)}: expected low, medium, high, critical or unspecified`);
  const approverTenantId = e.approverTenantId ?? '';
  const approverKeyId = e.approverKeyId ?? '';
  // Ids, or '' when no human (or no authenticated one) answered; a key id without its tenant says nothing.
  if (approverTenantId !== '') {
    checkId('approverTenantId', approverTenantId);
    // A tenant's keys answer only that tenant's runs.
    if (approverTenantId !== e.tenantId) throw new InvalidArgumentError('Invalid approverTenantId: the approver must belong to the entry\'s tenant');
  }
  if (approverKeyId !== '') {
    checkId('approverKeyId', approverKeyId);
    if (approverTenantId === '') throw new InvalidArgumentError('Invalid approver: approverKeyId given without approverTenantId');
  }
  const text = (s: string) => {
    let out = wellFormed(s);
    if (out.length > AUDIT_TEXT_MAX) out = out.slice(0, /[\uD800-\uDBFF]/.test(out[AUDIT_TEXT_MAX - 1] ?? '') ? AUDIT_TEXT_MAX - 1 : AUDIT_TEXT_MAX);
    return out;
  };
  return {
    ...e,
    toolName: wellFormed(e.toolName),
    reason: text(e.reason),
    rule: text(e.rule),
    decidedBy: text(e.decidedBy),
    comment: text(e.comment),
    approverTenantId,
    approverKeyId,
  };
}

/** The string with lone surrogates replaced by U+FFFD (String.prototype.toWellFormed, before ES2024). */
function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

function toAudit(row: Selectable<ApprovalAuditTable>): AuditEntry {
  return {
    tenantId: row.tenant_id,
    seq: Number(row.seq),
    threadId: row.thread_id,
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    argsSha256: row.args_sha256,
    decision: row.decision as AuditDecision,
    reason: row.reason,
    rule: row.rule,
    riskLevel: row.risk_level as AuditRiskLevel,
    decidedBy: row.decided_by,
    comment: row.comment,
    approverTenantId: row.approver_tenant_id,
    approverKeyId: row.approver_key_id,
    createdAtMs: Number(row.created_at),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

export function toUpload(row: Selectable<ThreadUploadsTable>): UploadRecord {
  return {
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    uploadId: row.upload_id,
    path: row.path,
    name: row.name,
    originalName: row.original_name,
    type: row.type,
    mime: row.mime,
    size: Number(row.size),
    mismatch: row.mismatch,
    createdAt: millisToDate(row.created_at),
    runId: row.run_id,
  };
}

export function toThread(row: Selectable<ThreadsTable>): ThreadRecord {
  return {
    threadId: row.thread_id,
    tenantId: row.tenant_id,
    createdAt: millisToDate(row.created_at),
    updatedAt: millisToDate(row.updated_at),
    metadata: parseObject(row.metadata, 'thread metadata'),
    status: row.status as ThreadStatus,
    values: row.state_values === null ? null : parseObject(row.state_values, 'thread values'),
    activeRunId: row.active_run_id ?? null,
  };
}

export function toRun(row: Selectable<RunsTable>): RunRecord {
  return {
    runId: row.run_id,
    threadId: row.thread_id,
    tenantId: row.tenant_id,
    assistantId: row.assistant_id,
    status: row.status as RunStatusName,
    createdAt: millisToDate(row.created_at),
    updatedAt: millisToDate(row.updated_at),
    startedAt: optionalDate(row.started_at),
    endedAt: optionalDate(row.ended_at),
    attempts: Number(row.attempts),
    error: row.error,
    metadata: parseObject(row.metadata, 'run metadata'),
    kwargs: parseObject(row.kwargs, 'run kwargs'),
    multitaskStrategy: row.multitask_strategy,
    deferred: Number(row.deferred) === 1,
    deadLetter: row.dead_letter_reason !== null && row.dead_letter_reason !== undefined ? { reason: row.dead_letter_reason, at: millisToDate(row.dead_lettered_at ?? row.updated_at) } : null,
    redrives: Number(row.redrives ?? 0),
  };
}

// ---------------------------------------------------------------------------
// Helpers

/**
 * Ids are compared byte for byte (binary collation on MySQL), but MySQL still
 * ignores trailing spaces, and SQLite would store any length: refuse both up front.
 */
export function checkId(field: string, value: string): void {
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH || value.trim() !== value || /[\u0000-\u001f]/.test(value)) {
    throw new InvalidArgumentError(`Invalid ${field} ${JSON.stringify(value)}: expected 1-${MAX_ID_LENGTH} characters without surrounding spaces or control characters`);
  }
}

export function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown };
  return e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062 || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Structural JSON equality, insensitive to key order. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && jsonEqual((a as JsonObject)[k], (b as JsonObject)[k]));
}
