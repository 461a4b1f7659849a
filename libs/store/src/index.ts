export {
  TERMINAL_RUN_STATUSES,
  type RunStatusName,
  type ThreadStatus,
  type JsonObject,
  type ThreadRecord,
  type RunRecord,
  type NewThread,
  type NewRun,
  type ThreadPatch,
  type ThreadCountFilter,
  type ThreadSearch,
  type Store,
  type ToolEffect,
  type ToolEffectKey,
  type ToolEffectState,
  type UploadRecord,
  type NewUpload,
  type AuditEntry,
  type NewAuditEntry,
  type AuditDecision,
  type AuditRiskLevel,
  type AuditHead,
  type AuditListFilter,
  type WebhookAttempt,
} from './types.js';
// Assistants (issue 11)
export {
  ASSISTANT_SORT_FIELDS,
  type AssistantFields,
  type AssistantRecord,
  type AssistantVersionRecord,
  type NewAssistant,
  type AssistantPatch,
  type AssistantSortField,
  type AssistantFilter,
  type AssistantSearch,
} from './types.js';
// Store items (issue 12)
export { type StoreItemRecord, type StoreItemHit, type StoreItemWrite, type StoreItemFilter, type StoreItemSearch, type NamespaceListing } from './types.js';
export { MAX_NAMESPACE_LENGTH, MAX_ITEM_KEY_LENGTH, STORE_SEARCH_SCAN_LIMIT, NAMESPACE_SEPARATOR, cosine } from './items/namespace.js';
export { StoreItems, type StoreItemsOptions, type PutItemOptions } from './items/store-items.js';
export { OpenAiEmbeddings, embeddingsFromEnv, type Embedder, type EmbeddingsConfig } from './items/embeddings.js';
export { indexedText } from './items/indexed-text.js';
// Usage ledger and token budgets (issue 17)
export { type TokenUsageIncrement, type TokenUsageRow, type TokenUsageSoFar } from './types.js';
export { TenantBudgets, type TenantBudgetsOptions } from './usage/tenant-budgets.js';
// Record and replay (issue 17)
export { type NewRecordingEvent, type RecordingEvent, type RecordingEventKind } from './types.js';
export { STORED_REQUEST_KEY, type StoredRequestRefs } from './recording-storage.js';
// Crons (issue 12)
export { CRON_SORT_FIELDS, type CronRecord, type NewCron, type CronPatch, type CronFilter, type CronSearch, type CronSortField } from './types.js';
export { SqlStore, type SqlStoreOptions } from './sql-store.js';
// OAuth grants of remote MCP servers (issue 14)
export { McpOAuthRepository, MCP_OAUTH_FLOW_TTL_MS, type McpOAuthGrant, type McpOAuthGrantPatch, type McpOAuthFlow } from './repositories/mcp-oauth.js';
export {
  RunLifecycle,
  threadStatusAfter,
  recordedError,
  runJobId,
  type DeadLetterRequest,
  type RedriveResult,
  type RunLifecycleOptions,
  type TerminalRunStatus,
  type RunErrorInfo,
  type RunJobSpec,
  type RunJobSink,
  type AdmitRequest,
  type AdmitResult,
  type StartResult,
  type EndCause,
  type EndRequest,
  type EndResult,
  type RunDeleteResult,
  type LifecycleEvent,
  type LifecycleEventType,
  type LifecycleSubscriber,
} from './run-lifecycle.js';
export { createSqliteStore, type SqliteStoreOptions } from './sqlite.js';
export { cachePreparedStatements, openCheckpointSqlite } from './statement-cache.js';
export { createMysqlStore, type MysqlStoreOptions } from './mysql.js';
export { createStore, type CreateStoreOptions } from './create-store.js';
export { MAX_ID_LENGTH, storeMigrations } from './migrations.js';
export type { SqlDialectName } from './schema.js';
export { auditEntryHash, verifyAuditChain, AuditChainVerifier, AUDIT_GENESIS_HASH, type AuditChainProblem } from './audit-hash.js';
export { SqliteGroupCommit, type GroupCommitSchedule } from './group-commit.js';
export {
  WalCheckpointer,
  BACKGROUND_AUTOCHECKPOINT_PAGES,
  DEFAULT_WAL_CHECKPOINT_INTERVAL_MS,
  type WalCheckpointerOptions,
  type WalCheckpointStats,
} from './wal-checkpointer.js';
