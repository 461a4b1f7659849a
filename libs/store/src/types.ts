/**
 * (One file, over 400 lines: the record types and the one `Store` contract every backend and test
 * fake implements, in sections per concern.)
 * Records of threads and runs, shared by the gateway (creates, reads) and the
 * orchestrator (status transitions, final values). One typed SQL layer (Kysely)
 * over MySQL/MariaDB in cluster mode and SQLite in embedded mode, with
 * versioned migrations. Every query is scoped by tenant.
 */

import type { Kysely } from 'kysely';
import type { Database, SqlDialectName } from './schema.js';

export type RunStatusName = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';
export const TERMINAL_RUN_STATUSES: readonly RunStatusName[] = ['success', 'error', 'timeout', 'interrupted'];

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

export type JsonObject = Record<string, unknown>;

export interface ThreadRecord {
  threadId: string;
  tenantId: string;
  createdAt: Date;
  updatedAt: Date;
  metadata: JsonObject;
  status: ThreadStatus;
  /** Latest state values (messages, ...) written by the orchestrator at the end of each run; null before the first run. */
  values: JsonObject | null;
  /** The run holding the thread (pending with its job queued, or running); null when none does. */
  activeRunId: string | null;
}

export interface RunRecord {
  runId: string;
  threadId: string;
  tenantId: string;
  assistantId: string;
  status: RunStatusName;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  attempts: number;
  /** Error message when status is error/timeout. */
  error: string | null;
  metadata: JsonObject;
  /** The request: input, command, config, webhook, stream_mode... as given by the client. */
  kwargs: JsonObject;
  multitaskStrategy: string;
  /** A pending run waiting for its thread's current run to end (multitask_strategy enqueue). */
  deferred: boolean;
  /** Set while the run is dead-lettered (its job failed for good at queue level): why, and when. */
  deadLetter: { reason: string; at: Date } | null;
  /** Times the run was re-driven from the dead letter (its queue job id: `runJobId`). */
  redrives: number;
}

export interface NewThread {
  threadId: string;
  tenantId: string;
  metadata?: JsonObject;
}

export interface NewRun {
  runId: string;
  threadId: string;
  tenantId: string;
  assistantId: string;
  metadata?: JsonObject;
  kwargs?: JsonObject;
  multitaskStrategy?: string;
}

/** Filters of `countThreads` (all optional, combined with AND). */
export interface ThreadCountFilter {
  metadata?: JsonObject;
  values?: JsonObject;
  status?: ThreadStatus;
}

/** What `searchThreads` takes: the count filters, the threads' ids, an order and a page. */
export interface ThreadSearch extends ThreadCountFilter {
  limit: number;
  offset: number;
  ids?: readonly string[];
  /** Default created_at, newest first. */
  sortBy?: 'thread_id' | 'status' | 'created_at' | 'updated_at';
  sortOrder?: 'asc' | 'desc';
}

/** What may change on a thread outside the run lifecycle (status and values belong to `RunLifecycle`). */
export interface ThreadPatch {
  metadata?: JsonObject;
}

/** State of one tool call in the effect ledger. */
export type ToolEffectState = 'started' | 'completed';

/** One tool call of a run, keyed by (run id, tool call id): what was started and what it returned. */
export interface ToolEffect {
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  state: ToolEffectState;
  /** The ToolMessage content once completed. */
  content: string | null;
  isError: boolean;
  /** Executions started for this call (more than 1 only for idempotent tools re-run after a crash). */
  executions: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface ToolEffectKey {
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
}

/** A file uploaded to a thread's workspace (seed 001 §3.2). */
export interface UploadRecord {
  tenantId: string;
  threadId: string;
  uploadId: string;
  /** Workspace-relative path, e.g. "uploads/report.pdf". */
  path: string;
  /** Stored (sanitized) file name. */
  name: string;
  /** The name the client sent. */
  originalName: string;
  /** Kind (seed 001 §3.1), content-checked. */
  type: string;
  mime: string;
  size: number;
  /** Set when the extension and the content disagree. */
  mismatch: string | null;
  createdAt: Date;
  /** The run whose input announced the file (seed 001 §3.3); null while pending. */
  runId: string | null;
}

export type NewUpload = Omit<UploadRecord, 'createdAt' | 'runId'>;

/** How a tool call was decided: by a human (approved / rejected) or by the rules without asking (denied). */
export type AuditDecision = 'approved' | 'rejected' | 'denied';
export type AuditRiskLevel = 'low' | 'medium' | 'high' | 'critical' | 'unspecified';

/** One entry of a tenant's tool approval audit trail (hash-chained; see `auditEntryHash`). */
export interface AuditEntry {
  tenantId: string;
  /** 1, 2, 3… per tenant, without gaps. */
  seq: number;
  threadId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  argsSha256: string;
  decision: AuditDecision;
  reason: string;
  rule: string;
  riskLevel: AuditRiskLevel;
  /** Who decided as the client labelled it (free text from the resume, e.g. an e-mail), or "rules". Not authenticated. */
  decidedBy: string;
  comment: string;
  /**
   * The authenticated identity behind a human decision, set by the server (never by the client):
   * the tenant and the API key id of the resume. Empty for decisions by the rules and for entries
   * written before these fields existed (migration 0008).
   */
  approverTenantId: string;
  approverKeyId: string;
  createdAtMs: number;
  prevHash: string;
  hash: string;
}

/** A new entry; the approver identity may be left out (a denial by the rules has none). */
export type NewAuditEntry = Omit<AuditEntry, 'seq' | 'createdAtMs' | 'prevHash' | 'hash' | 'approverTenantId' | 'approverKeyId'> &
  Partial<Pick<AuditEntry, 'approverTenantId' | 'approverKeyId'>>;

/** The end of a tenant's chain as the store last appended it (kept apart from the entries). */
export interface AuditHead {
  seq: number;
  hash: string;
}

export interface AuditListFilter {
  runId?: string;
  threadId?: string;
  /** Entries with seq > afterSeq (default 0). */
  afterSeq?: number;
  /** At most this many (default 100, at most 10,000). */
  limit?: number;
}

/** One attempt to deliver a run's webhook. */
export interface WebhookAttempt {
  tenantId: string;
  deliveryId: string;
  runId: string;
  /** 1, 2, 3… */
  attempt: number;
  at: Date;
  /** delivered | retry (will be retried) | failed (final) | refused (SSRF guard) */
  outcome: 'delivered' | 'retry' | 'failed' | 'refused';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

// ---------------------------------------------------------------------------
// Assistants (issue 11): LangGraph Platform agent configurations, versioned, per tenant.

/** The fields every version of an assistant carries. */
export interface AssistantFields {
  graphId: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
}

/** An assistant as it is now: the fields of the version in use. */
export interface AssistantRecord extends AssistantFields {
  tenantId: string;
  assistantId: string;
  /** The version in use (the latest unless `setAssistantLatest` chose an older one). */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** One immutable version; `createdAt` is when that version was written. */
export interface AssistantVersionRecord extends AssistantFields {
  tenantId: string;
  assistantId: string;
  version: number;
  createdAt: Date;
}

export interface NewAssistant extends Partial<Omit<AssistantFields, 'graphId' | 'name'>> {
  tenantId: string;
  assistantId: string;
  graphId: string;
  name: string;
}

/** What an update changes: given fields replace the current version's, metadata is merged key by key. */
export type AssistantPatch = Partial<AssistantFields>;

export const ASSISTANT_SORT_FIELDS = ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'] as const;
export type AssistantSortField = (typeof ASSISTANT_SORT_FIELDS)[number];

/** Which assistants: every given filter must match (name: case-insensitive substring; metadata: top-level JSON equality). */
export interface AssistantFilter {
  graphId?: string;
  name?: string;
  metadata?: JsonObject;
}

export interface AssistantSearch extends AssistantFilter {
  limit: number;
  offset: number;
  /** Default created_at, descending; ties broken by assistant_id ascending. */
  sortBy?: AssistantSortField;
  sortOrder?: 'asc' | 'desc';
}

// ---------------------------------------------------------------------------
// Crons (issue 12)

export const CRON_SORT_FIELDS = ['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date'] as const;
export type CronSortField = (typeof CRON_SORT_FIELDS)[number];

/** A cron as stored: LangGraph Platform's scheduled run. `threadId` undefined: stateless (a new thread per firing). */
export interface CronRecord {
  tenantId: string;
  cronId: string;
  assistantId: string;
  threadId: string | undefined;
  /** Cron expression, read in `timezone` (UTC when undefined). */
  schedule: string;
  timezone: string | undefined;
  /** No firing after this instant. */
  endTime: Date | undefined;
  /** The run-creation body each firing sends (input, config, webhook, ...), as the API received it. */
  payload: JsonObject;
  metadata: JsonObject;
  enabled: boolean;
  /** Stateless crons: whether a firing's thread is deleted once its run ends. */
  onRunCompleted: 'delete' | 'keep' | undefined;
  userId: string | undefined;
  createdAt: Date;
  updatedAt: Date;
}

export type NewCron = Omit<CronRecord, 'createdAt' | 'updatedAt'>;

/** Fields a PATCH may change; undefined leaves a field as it is, null clears an optional one. */
export interface CronPatch {
  schedule?: string;
  timezone?: string | null;
  endTime?: Date | null;
  payload?: JsonObject;
  metadata?: JsonObject;
  enabled?: boolean;
  onRunCompleted?: 'delete' | 'keep' | null;
}

export interface CronFilter {
  assistantId?: string;
  threadId?: string;
  enabled?: boolean;
  /** Exact match on each key. */
  metadata?: JsonObject;
}

export interface CronSearch extends CronFilter {
  limit: number;
  offset: number;
  /** Default created_at descending; `next_run_date` is not stored and sorts as created_at. Ties by cron_id. */
  sortBy?: CronSortField;
  sortOrder?: 'asc' | 'desc';
}

// Store items (issue 12): LangGraph Platform's long-term memory store, per tenant.

/** One item of the memory store. `namespace` is a path of labels (non-empty, without "."). */
export interface StoreItemRecord {
  tenantId: string;
  namespace: string[];
  key: string;
  value: JsonObject;
  createdAt: Date;
  updatedAt: Date;
  /** When the item disappears; null = never. */
  expiresAt: Date | null;
  /** Its time to live in minutes (refresh_ttl restarts it); null = none. */
  ttlMinutes: number | null;
}

/** A search result: the item, and its similarity to the query when ranked by embeddings. */
export interface StoreItemHit extends StoreItemRecord {
  score: number | null;
}

export interface StoreItemWrite {
  tenantId: string;
  namespace: string[];
  key: string;
  value: JsonObject;
  /** Minutes until the item expires; null/absent = never. */
  ttlMinutes?: number | null;
  /** The text a query matches (the indexed fields); null = not indexed (never matched by a query). */
  searchText: string | null;
  /** The embedding of `searchText`, when an embeddings endpoint is configured. */
  embedding?: number[] | null;
}

/** Top-level value filter: `{field: value}` (JSON equality) or `{field: {$eq|$ne|$gt|$gte|$lt|$lte: value}}`. */
export type StoreItemFilter = JsonObject;

export interface StoreItemSearch {
  namespacePrefix: string[];
  filter?: StoreItemFilter;
  limit: number;
  offset: number;
  /** Free text: ranked by `queryVector` when given, otherwise every word must occur in the indexed text (case-insensitive). */
  query?: string;
  queryVector?: number[];
  /** Restart the TTL of the items returned. */
  refreshTtl?: boolean;
}

export interface NamespaceListing {
  /** Labels the namespace starts with; "*" matches any one label. */
  prefix?: string[];
  /** Labels the namespace ends with; "*" matches any one label. */
  suffix?: string[];
  /** Namespaces are cut to this many labels (then deduplicated). */
  maxDepth?: number;
  limit: number;
  offset: number;
}
// Record and replay (issue 17)

/** What a recording event is: a model call (request and answer), a tool call (call and result), a replay's outcome. */
export type RecordingEventKind = 'model_call' | 'tool_call' | 'replay';

export interface NewRecordingEvent {
  tenantId: string;
  runId: string;
  /** Names the event within its run (`model:<turn>`, `tool:<tool call id>`, `replay`); a second write under it is ignored. */
  key: string;
  kind: RecordingEventKind;
  /** The model call (turn) the event belongs to. */
  step: number;
  payload: JsonObject;
  /**
   * The payload's request refers to an earlier event's messages and to a stored tool set
   * (`recording-storage.ts`, written by the run recorder); reads expand it. Without it a payload
   * must not use the reserved request key `$stored`.
   */
  compact?: boolean;
}

export interface RecordingEvent extends Omit<NewRecordingEvent, 'tenantId' | 'compact'> {
  createdAt: Date;
}
// ---------------------------------------------------------------------------

// Usage ledger (issue 17)

/** One model call's usage, added to the ledger row of (tenant, UTC day, model). */
export interface TokenUsageIncrement {
  tenantId: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** The run's first model call: the row counts one more run. */
  firstCallOfRun: boolean;
}

/** One ledger row. */
export interface TokenUsageRow {
  tenantId: string;
  day: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  modelCalls: number;
  runs: number;
}

/** A tenant's total tokens today and this month. */
export interface TokenUsageSoFar {
  day: number;
  month: number;
}

export interface Store {
  /** Runs pending migrations; idempotent and safe when several processes start at once. */
  migrate(): Promise<void>;

  /** Creates a thread; returns the existing one when the id already exists for this tenant (if_exists=do_nothing). */
  createThread(t: NewThread): Promise<ThreadRecord>;
  getThread(tenantId: string, threadId: string): Promise<ThreadRecord | undefined>;
  updateThread(tenantId: string, threadId: string, patch: ThreadPatch): Promise<void>;
  deleteThread(tenantId: string, threadId: string): Promise<boolean>;
  searchThreads(tenantId: string, opts: ThreadSearch): Promise<ThreadRecord[]>;

  // --- threads API in full (issue 11): count, and state edited outside a run ------------------
  /** Threads of the tenant matching every filter (metadata/values: top-level keys equal), counted in SQL. */
  countThreads(tenantId: string, filter: ThreadCountFilter): Promise<number>;
  // --- end threads API ---------------------------------------------------------------------

  getRun(tenantId: string, runId: string): Promise<RunRecord | undefined>;
  /**
   * The run and its thread's values in one read (`runs.wait` answers with both once the run has
   * ended); `threadValues` is null when the thread has none (or is gone). Undefined: no such run.
   */
  getRunWithThreadValues(tenantId: string, runId: string): Promise<{ run: RunRecord; threadValues: JsonObject | null } | undefined>;
  listRuns(tenantId: string, threadId: string, opts?: { limit?: number; offset?: number; status?: RunStatusName }): Promise<RunRecord[]>;
  /** Runs of the tenant that are pending or running (admission quotas). */
  countActiveRuns(tenantId: string): Promise<number>;
  /** Runs of every tenant in a status whose record has not changed since `updatedBefore`, oldest first (operations). */
  listRunsInStatus(status: RunStatusName, updatedBefore: Date, limit: number): Promise<RunRecord[]>;
  /** How many threads of each tenant are in `status` (operations: the approvals-waiting gauge counts `interrupted`). */
  countThreadsByTenant(status: ThreadStatus): Promise<Array<{ tenantId: string; count: number }>>;
  // --- runs API in full (issue 11): bulk cancel ---
  /** The tenant's runs in any of `statuses`, on every thread, oldest first, at most `limit` (`POST /runs/cancel`). */
  listTenantRunsInStatus(tenantId: string, statuses: RunStatusName[], limit: number): Promise<RunRecord[]>;
  // --- end runs API block ---
  /**
   * Runs `fn` as one write transaction on one connection: SQLite takes the write lock up front
   * (BEGIN IMMEDIATE, waiting for it without blocking the process), MySQL retries on a deadlock,
   * so `fn` may run more than once and must only touch the database. The primitive of
   * `RunLifecycle`, the one owner of run and thread status changes.
   */
  writeTransaction<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs `fn`, which sends ONE write statement, without a transaction around it: a single
   * statement is atomic by itself, and BEGIN/COMMIT would triple its round trips (issue 9). For
   * `RunLifecycle` transitions that are one guarded update.
   */
  writeStatement<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /** The SQL dialect (`RunLifecycle` locks rows with FOR UPDATE on MySQL). */
  readonly dialect: SqlDialectName;

  /**
   * Effect ledger: records that a tool call is starting. Returns created=true
   * for the first claim; otherwise the existing entry (started by an earlier,
   * possibly crashed, attempt — or completed).
   */
  claimToolEffect(key: ToolEffectKey): Promise<{ effect: ToolEffect; created: boolean }>;
  /** Counts one more execution of a started call (an idempotent tool re-run after a crash). */
  restartToolEffect(tenantId: string, runId: string, toolCallId: string): Promise<void>;
  /** Records a call's result. Idempotent: a completed entry keeps its first result. */
  completeToolEffect(tenantId: string, runId: string, toolCallId: string, result: { content: string; isError: boolean }): Promise<ToolEffect>;
  listToolEffects(tenantId: string, runId: string): Promise<ToolEffect[]>;

  /** Records an uploaded file as pending: the thread's next run announces it. */
  addUpload(u: NewUpload): Promise<UploadRecord>;
  /**
   * Hands the thread's pending uploads to a run and returns every upload the
   * run holds, oldest first. Atomic and idempotent: two runs never get the same
   * upload, and the same run asking again gets the same list.
   */
  claimUploads(tenantId: string, threadId: string, runId: string): Promise<UploadRecord[]>;
  /** Uploads of a thread, oldest first (pending and announced). */
  listUploads(tenantId: string, threadId: string): Promise<UploadRecord[]>;

  /**
   * Appends to the tenant's audit chain, serialized per tenant across processes. Recording the same
   * (tenant, run, tool call) again returns the first entry with duplicate=true, whatever the new
   * entry said: the caller compares the two (the approval service refuses a different call recorded
   * under an id already used). Ids longer than
   * MAX_ID_LENGTH, an args_sha256 that is not 64 hex digits, an unknown decision, or a malformed
   * approver identity are refused.
   */
  appendAuditEntry(e: NewAuditEntry): Promise<{ entry: AuditEntry; duplicate: boolean }>;
  /** Entries oldest first, after `afterSeq`, optionally of one run or thread. */
  listAuditEntries(tenantId: string, filter?: AuditListFilter): Promise<AuditEntry[]>;
  /** One entry by its seq. */
  getAuditEntry(tenantId: string, seq: number): Promise<AuditEntry | undefined>;
  /** The tenant's chain head (last seq and hash); undefined before the first append. */
  getAuditHead(tenantId: string): Promise<AuditHead | undefined>;
  /** Logs one webhook delivery attempt (the same attempt twice keeps the first). */
  recordWebhookAttempt(a: WebhookAttempt): Promise<void>;
  /** A delivery's attempts, first to last. */
  listWebhookAttempts(tenantId: string, deliveryId: string): Promise<WebhookAttempt[]>;

  // -------------------------------------------------------------------------
  // Assistants (issue 11)

  /** Creates an assistant at version 1; `created` is false (and the stored one returned) when the id exists for this tenant. */
  createAssistant(a: NewAssistant): Promise<{ assistant: AssistantRecord; created: boolean }>;
  getAssistant(tenantId: string, assistantId: string): Promise<AssistantRecord | undefined>;
  /** Writes version max+1 from the current one and the patch, and makes it the latest; undefined when there is no such assistant. */
  updateAssistant(tenantId: string, assistantId: string, patch: AssistantPatch): Promise<AssistantRecord | undefined>;
  /** Deletes the assistant and all its versions. */
  deleteAssistant(tenantId: string, assistantId: string): Promise<boolean>;
  searchAssistants(tenantId: string, opts: AssistantSearch): Promise<AssistantRecord[]>;
  countAssistants(tenantId: string, filter: AssistantFilter): Promise<number>;
  /** Versions newest first; empty when there is no such assistant. */
  listAssistantVersions(
    tenantId: string,
    assistantId: string,
    opts: { limit: number; offset: number; metadata?: JsonObject },
  ): Promise<AssistantVersionRecord[]>;
  /** Makes `version` the one in use; undefined when there is no such assistant, NotFoundError when it has no such version. */
  setAssistantLatest(tenantId: string, assistantId: string, version: number): Promise<AssistantRecord | undefined>;
  // -------------------------------------------------------------------------
  // Crons (issue 12)

  /** Stores a new cron; a cron id already used by the tenant is a CONFLICT. */
  createCron(c: NewCron): Promise<CronRecord>;
  getCron(tenantId: string, cronId: string): Promise<CronRecord | undefined>;
  /** Applies the patch; undefined when the tenant has no such cron. */
  updateCron(tenantId: string, cronId: string, patch: CronPatch): Promise<CronRecord | undefined>;
  deleteCron(tenantId: string, cronId: string): Promise<boolean>;
  searchCrons(tenantId: string, opts: CronSearch): Promise<CronRecord[]>;
  countCrons(tenantId: string, filter: CronFilter): Promise<number>;
  // Store items (issue 12)

  /** Creates or replaces an item (created_at kept on replace). Labels or key too long, or a label with ".", are refused. */
  putItem(item: StoreItemWrite): Promise<void>;
  /** The item unless missing or expired; `refreshTtl` restarts its TTL. */
  getItem(tenantId: string, namespace: string[], key: string, opts?: { refreshTtl?: boolean }): Promise<StoreItemRecord | undefined>;
  deleteItem(tenantId: string, namespace: string[], key: string): Promise<boolean>;
  /** Items under a namespace prefix (see `StoreItemSearch`); at most STORE_SEARCH_SCAN_LIMIT candidates are examined when a filter or query applies. */
  searchItems(tenantId: string, search: StoreItemSearch): Promise<StoreItemHit[]>;
  /** Distinct namespaces holding live items, sorted. */
  listItemNamespaces(tenantId: string, opts: NamespaceListing): Promise<string[][]>;
  /** Deletes up to `limit` expired items of every tenant; returns how many. */
  sweepExpiredItems(limit: number): Promise<number>;
  // Usage ledger (issue 17)

  /** Adds one model call to the ledger: one upsert-increment statement. */
  recordTokenUsage(u: TokenUsageIncrement): Promise<void>;
  /** The tenant's total tokens on `day` and from `monthStart` through `day` (YYYY-MM-DD). */
  tokenUsageSoFar(tenantId: string, day: string, monthStart: string): Promise<TokenUsageSoFar>;
  /** The tenant's ledger rows from `from` through `to` (inclusive, YYYY-MM-DD). */
  tokenUsageRows(tenantId: string, from: string, to: string): Promise<TokenUsageRow[]>;
  /** Every tenant's ledger rows in the range — for an operator's report, never a tenant's. */
  tokenUsageRowsOfAllTenants(from: string, to: string): Promise<TokenUsageRow[]>;
  // -------------------------------------------------------------------------
  // Ops console (issue 16): reads across threads, and across tenants when `tenantId` is undefined
  // (an admin key; the gateway decides who may). Reads only.

  /** Runs across threads, newest first; one tenant's, or every tenant's when `tenantId` is undefined. */
  listConsoleRuns(filter: { tenantId?: string; status?: RunStatusName; limit: number; offset: number }): Promise<RunRecord[]>;
  /** Threads waiting for a human (interrupted), most recently stopped first; every tenant's when `tenantId` is undefined. */
  listInterruptedThreads(tenantId: string | undefined, limit: number): Promise<ThreadRecord[]>;
  /** Runs of every tenant changed at or after `since` (epoch ms), oldest change first (the console's live feed). */
  listRunsChangedSince(since: number, limit: number): Promise<RunRecord[]>;
  /** A run by id whatever its tenant (an admin's view of one run). */
  findRunAnyTenant(runId: string): Promise<RunRecord | undefined>;
  // Record and replay (issue 17)

  /**
   * Records one event of a run; an event already recorded under the same key is kept unchanged.
   * True when this call wrote it, false when the key was there already.
   */
  appendRecordingEvent(e: NewRecordingEvent): Promise<boolean>;
  /**
   * Stores a recorded set of offered tools (a JSON array's text) once per tenant; returns the hash
   * a compact model call refers to it by (`recording-storage.ts`).
   */
  saveRecordingToolset(tenantId: string, toolsJson: string): Promise<string>;
  /** A run's recorded events, in the order they were written; empty for a run not recorded or of another tenant. */
  listRecordingEvents(tenantId: string, runId: string): Promise<RecordingEvent[]>;
  // -------------------------------------------------------------------------

  close(): Promise<void>;
}
