/**
 * `SqlStore`: the `Store` over one Kysely instance, as a thin facade. The queries live in one
 * repository per concept (`repositories/`: threads, runs (reads), tool effects, uploads, audit,
 * webhooks), all over this store's Kysely instance; the write primitives `RunLifecycle` builds on
 * live in `SqlWriter`. The facade keeps the one `Store` interface every caller already uses, and
 * owns what belongs to the database as a whole: migrations and closing.
 */
import { Migrator, sql, type Kysely } from 'kysely';
import { AgentLoopError, errorMessage, sleep } from '@agentloop/core';
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE, migrationProvider } from './migrations.js';
import type { Database, SqlDialectName } from './schema.js';
import {
  AuditRepository,
  RunRepository,
  ThreadRepository,
  ToolEffectRepository,
  UploadRepository,
  WebhookRepository,
  type RepositoryContext,
} from './repositories/index.js';
import { isSqliteBusy } from './repositories/rows.js';
// Assistants (issue 11)
import { AssistantRepository } from './repositories/assistants.js';
import type { AssistantFilter, AssistantPatch, AssistantRecord, AssistantSearch, AssistantVersionRecord, NewAssistant } from './types.js';
// Store items (issue 12)
import { StoreItemRepository } from './repositories/store-items.js';
import type { NamespaceListing, StoreItemHit, StoreItemRecord, StoreItemSearch, StoreItemWrite } from './types.js';
// Crons (issue 12)
import { CronRepository } from './repositories/crons.js';
import type { CronFilter, CronPatch, CronRecord, CronSearch, NewCron } from './types.js';
// Usage ledger (issue 17)
import { TokenUsageRepository } from './repositories/token-usage.js';
import type { TokenUsageIncrement, TokenUsageRow, TokenUsageSoFar } from './types.js';
// Record and replay (issue 17)
import { RecordingRepository } from './repositories/recordings.js';
import { McpOAuthRepository } from './repositories/mcp-oauth.js';
import type { NewRecordingEvent, RecordingEvent } from './types.js';
import { SqlWriter } from './write-transaction.js';
// Ops console (issue 16)
import { ConsoleRepository, type ConsoleRunFilter } from './repositories/console.js';
import type {
  AuditEntry,
  AuditHead,
  AuditListFilter,
  JsonObject,
  NewAuditEntry,
  NewThread,
  NewUpload,
  RunRecord,
  RunStatusName,
  Store,
  ThreadPatch,
  ThreadCountFilter,
  ThreadStatus,
  ThreadSearch,
  ThreadRecord,
  ToolEffect,
  ToolEffectKey,
  UploadRecord,
  WebhookAttempt,
} from './types.js';

export interface SqlStoreOptions {
  dialect: SqlDialectName;
  db: Kysely<Database>;
  /** How long `migrate()` keeps retrying while another SQLite connection holds the write lock (default 60 s). */
  migrateTimeoutMs?: number;
  /** Clock in epoch ms (tests). */
  now?: () => number;
  /**
   * Run by `close()` after Kysely's `destroy()`, which does nothing when Kysely's executor never
   * ran a query: a connection that prepared statements use directly (prepared-query.ts
   * runDirectlyOn) is committed and closed here.
   */
  onClose?: () => Promise<void>;
}

/**
 * The `Store` over Kysely: the same queries for MySQL/MariaDB and SQLite,
 * with the few dialect differences (duplicate-key detection, migration lock)
 * handled in the layer. Every statement filters on `tenant_id`.
 */
export class SqlStore implements Store {
  readonly dialect: SqlDialectName;
  /** The Kysely instance, for callers that need their own queries on the same connection pool. */
  readonly db: Kysely<Database>;
  readonly threads: ThreadRepository;
  /** Reads only: run writes belong to `RunLifecycle`. */
  readonly runs: RunRepository;
  readonly toolEffects: ToolEffectRepository;
  readonly uploads: UploadRepository;
  readonly audit: AuditRepository;
  readonly webhooks: WebhookRepository;
  /** Assistants and their versions (issue 11). */
  readonly assistants: AssistantRepository;
  /** The long-term memory store's items (issue 12). */
  readonly storeItems: StoreItemRepository;
  /** Crons (issue 12). */
  readonly crons: CronRepository;
  /** Usage ledger (issue 17). */
  readonly tokenUsage: TokenUsageRepository;
  /** The ops console's reads (issue 16). */
  readonly console: ConsoleRepository;
  /** Run recordings (issue 17). */
  readonly recordings: RecordingRepository;
  /** OAuth grants of remote MCP servers, per tenant (issue 14). */
  readonly mcpOAuth: McpOAuthRepository;
  private readonly writer: SqlWriter;
  private readonly migrateTimeoutMs: number;
  private closed: Promise<void> | undefined;
  private readonly onClose: (() => Promise<void>) | undefined;

  constructor(opts: SqlStoreOptions) {
    this.dialect = opts.dialect;
    this.onClose = opts.onClose;
    this.db = opts.db;
    this.migrateTimeoutMs = opts.migrateTimeoutMs ?? 60_000;
    const ctx: RepositoryContext = { db: opts.db, dialect: opts.dialect, now: opts.now ?? Date.now };
    // One writer for the store: every multi-statement write takes SQLite's lock up front through it.
    this.writer = new SqlWriter(opts.db, opts.dialect);
    this.threads = new ThreadRepository(ctx, this.writer);
    this.runs = new RunRepository(ctx);
    this.toolEffects = new ToolEffectRepository(ctx);
    this.uploads = new UploadRepository(ctx);
    this.audit = new AuditRepository(ctx, this.writer);
    this.webhooks = new WebhookRepository(ctx);
    this.assistants = new AssistantRepository(ctx, this.writer);
    // Store items (issue 12)
    this.storeItems = new StoreItemRepository(ctx);
    this.crons = new CronRepository(ctx);
    this.tokenUsage = new TokenUsageRepository(ctx);
    this.console = new ConsoleRepository(ctx);
    this.recordings = new RecordingRepository(ctx);
    this.mcpOAuth = new McpOAuthRepository(ctx);
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
  // Write primitives (`RunLifecycle`)

  writeStatement<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.writer.writeStatement(fn);
  }

  writeTransaction<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.writer.writeTransaction(fn);
  }

  // -------------------------------------------------------------------------
  // Delegation to the repositories (the `Store` interface, unchanged for its callers)

  createThread(t: NewThread): Promise<ThreadRecord> {
    return this.threads.create(t);
  }
  getThread(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    return this.threads.get(tenantId, threadId);
  }
  updateThread(tenantId: string, threadId: string, patch: ThreadPatch): Promise<void> {
    return this.threads.update(tenantId, threadId, patch);
  }
  deleteThread(tenantId: string, threadId: string): Promise<boolean> {
    return this.threads.delete(tenantId, threadId);
  }
  searchThreads(tenantId: string, opts: ThreadSearch): Promise<ThreadRecord[]> {
    return this.threads.search(tenantId, opts);
  }

  // --- threads API in full (issue 11) ---
  countThreads(tenantId: string, filter: ThreadCountFilter): Promise<number> {
    return this.threads.count(tenantId, filter);
  }
  countThreadsByTenant(status: ThreadStatus): Promise<Array<{ tenantId: string; count: number }>> {
    return this.threads.countByTenant(status);
  }
  // --- end threads API ---

  getRun(tenantId: string, runId: string): Promise<RunRecord | undefined> {
    return this.runs.get(tenantId, runId);
  }
  getRunWithThreadValues(tenantId: string, runId: string): Promise<{ run: RunRecord; threadValues: JsonObject | null } | undefined> {
    return this.runs.getWithThreadValues(tenantId, runId);
  }
  listRuns(tenantId: string, threadId: string, opts?: { limit?: number; offset?: number; status?: RunStatusName }): Promise<RunRecord[]> {
    return this.runs.list(tenantId, threadId, opts);
  }
  listRunsInStatus(status: RunStatusName, updatedBefore: Date, limit: number): Promise<RunRecord[]> {
    return this.runs.listInStatus(status, updatedBefore, limit);
  }
  countActiveRuns(tenantId: string): Promise<number> {
    return this.runs.countActive(tenantId);
  }
  // --- runs API in full (issue 11): bulk cancel ---
  listTenantRunsInStatus(tenantId: string, statuses: RunStatusName[], limit: number): Promise<RunRecord[]> {
    return this.runs.listOfTenantInStatus(tenantId, statuses, limit);
  }
  // --- end runs API block ---

  claimToolEffect(key: ToolEffectKey): Promise<{ effect: ToolEffect; created: boolean }> {
    return this.toolEffects.claim(key);
  }
  restartToolEffect(tenantId: string, runId: string, toolCallId: string): Promise<void> {
    return this.toolEffects.restart(tenantId, runId, toolCallId);
  }
  completeToolEffect(tenantId: string, runId: string, toolCallId: string, result: { content: string; isError: boolean }): Promise<ToolEffect> {
    return this.toolEffects.complete(tenantId, runId, toolCallId, result);
  }
  listToolEffects(tenantId: string, runId: string): Promise<ToolEffect[]> {
    return this.toolEffects.list(tenantId, runId);
  }

  addUpload(u: NewUpload): Promise<UploadRecord> {
    return this.uploads.add(u);
  }
  claimUploads(tenantId: string, threadId: string, runId: string): Promise<UploadRecord[]> {
    return this.uploads.claim(tenantId, threadId, runId);
  }
  listUploads(tenantId: string, threadId: string): Promise<UploadRecord[]> {
    return this.uploads.list(tenantId, threadId);
  }

  appendAuditEntry(e: NewAuditEntry): Promise<{ entry: AuditEntry; duplicate: boolean }> {
    return this.audit.append(e);
  }
  listAuditEntries(tenantId: string, filter?: AuditListFilter): Promise<AuditEntry[]> {
    return this.audit.list(tenantId, filter);
  }
  getAuditEntry(tenantId: string, seq: number): Promise<AuditEntry | undefined> {
    return this.audit.get(tenantId, seq);
  }
  getAuditHead(tenantId: string): Promise<AuditHead | undefined> {
    return this.audit.head(tenantId);
  }

  recordWebhookAttempt(a: WebhookAttempt): Promise<void> {
    return this.webhooks.recordAttempt(a);
  }
  listWebhookAttempts(tenantId: string, deliveryId: string): Promise<WebhookAttempt[]> {
    return this.webhooks.listAttempts(tenantId, deliveryId);
  }

  // -------------------------------------------------------------------------
  // Assistants (issue 11)

  createAssistant(a: NewAssistant): Promise<{ assistant: AssistantRecord; created: boolean }> {
    return this.assistants.create(a);
  }
  getAssistant(tenantId: string, assistantId: string): Promise<AssistantRecord | undefined> {
    return this.assistants.get(tenantId, assistantId);
  }
  updateAssistant(tenantId: string, assistantId: string, patch: AssistantPatch): Promise<AssistantRecord | undefined> {
    return this.assistants.update(tenantId, assistantId, patch);
  }
  deleteAssistant(tenantId: string, assistantId: string): Promise<boolean> {
    return this.assistants.delete(tenantId, assistantId);
  }
  searchAssistants(tenantId: string, opts: AssistantSearch): Promise<AssistantRecord[]> {
    return this.assistants.search(tenantId, opts);
  }
  countAssistants(tenantId: string, filter: AssistantFilter): Promise<number> {
    return this.assistants.count(tenantId, filter);
  }
  listAssistantVersions(
    tenantId: string,
    assistantId: string,
    opts: { limit: number; offset: number; metadata?: JsonObject },
  ): Promise<AssistantVersionRecord[]> {
    return this.assistants.listVersions(tenantId, assistantId, opts);
  }
  setAssistantLatest(tenantId: string, assistantId: string, version: number): Promise<AssistantRecord | undefined> {
    return this.assistants.setLatest(tenantId, assistantId, version);
  }
  // -------------------------------------------------------------------------
  // Store items (issue 12)

  putItem(item: StoreItemWrite): Promise<void> {
    return this.storeItems.put(item);
  }
  getItem(tenantId: string, namespace: string[], key: string, opts?: { refreshTtl?: boolean }): Promise<StoreItemRecord | undefined> {
    return this.storeItems.get(tenantId, namespace, key, opts);
  }
  deleteItem(tenantId: string, namespace: string[], key: string): Promise<boolean> {
    return this.storeItems.delete(tenantId, namespace, key);
  }
  searchItems(tenantId: string, search: StoreItemSearch): Promise<StoreItemHit[]> {
    return this.storeItems.search(tenantId, search);
  }
  listItemNamespaces(tenantId: string, opts: NamespaceListing): Promise<string[][]> {
    return this.storeItems.listNamespaces(tenantId, opts);
  }
  sweepExpiredItems(limit: number): Promise<number> {
    return this.storeItems.sweep(limit);
  }
  // Crons (issue 12)

  createCron(c: NewCron): Promise<CronRecord> {
    return this.crons.create(c);
  }
  getCron(tenantId: string, cronId: string): Promise<CronRecord | undefined> {
    return this.crons.get(tenantId, cronId);
  }
  updateCron(tenantId: string, cronId: string, patch: CronPatch): Promise<CronRecord | undefined> {
    return this.crons.update(tenantId, cronId, patch);
  }
  deleteCron(tenantId: string, cronId: string): Promise<boolean> {
    return this.crons.delete(tenantId, cronId);
  }
  searchCrons(tenantId: string, opts: CronSearch): Promise<CronRecord[]> {
    return this.crons.search(tenantId, opts);
  }
  countCrons(tenantId: string, filter: CronFilter): Promise<number> {
    return this.crons.count(tenantId, filter);
  }
  // Usage ledger (issue 17)

  recordTokenUsage(u: TokenUsageIncrement): Promise<void> {
    return this.tokenUsage.record(u);
  }
  tokenUsageSoFar(tenantId: string, day: string, monthStart: string): Promise<TokenUsageSoFar> {
    return this.tokenUsage.soFar(tenantId, day, monthStart);
  }
  tokenUsageRows(tenantId: string, from: string, to: string): Promise<TokenUsageRow[]> {
    return this.tokenUsage.rows(tenantId, from, to);
  }
  tokenUsageRowsOfAllTenants(from: string, to: string): Promise<TokenUsageRow[]> {
    return this.tokenUsage.rowsOfAllTenants(from, to);
  }
  // -------------------------------------------------------------------------
  // Ops console (issue 16)

  listConsoleRuns(filter: ConsoleRunFilter): Promise<RunRecord[]> {
    return this.console.listRuns(filter);
  }
  listInterruptedThreads(tenantId: string | undefined, limit: number): Promise<ThreadRecord[]> {
    return this.console.listInterruptedThreads(tenantId, limit);
  }
  listRunsChangedSince(since: number, limit: number): Promise<RunRecord[]> {
    return this.console.listRunsChangedSince(since, limit);
  }
  findRunAnyTenant(runId: string): Promise<RunRecord | undefined> {
    return this.console.findRun(runId);
  }
  // -------------------------------------------------------------------------
  // Record and replay (issue 17)

  appendRecordingEvent(e: NewRecordingEvent): Promise<boolean> {
    return this.recordings.append(e);
  }
  saveRecordingToolset(tenantId: string, toolsJson: string): Promise<string> {
    return this.recordings.saveToolset(tenantId, toolsJson);
  }
  listRecordingEvents(tenantId: string, runId: string): Promise<RecordingEvent[]> {
    return this.recordings.list(tenantId, runId);
  }
  // -------------------------------------------------------------------------

  close(): Promise<void> {
    return (this.closed ??= this.db.destroy().then(this.onClose));
  }
}
