/**
 * Table shapes as Kysely sees them. Timestamps are epoch milliseconds in a
 * 64-bit integer column on both dialects: exact to the millisecond, no
 * time-zone conversion in either driver, and ordered like the instants they
 * stand for. JSON documents are TEXT (SQLite) / LONGTEXT (MySQL) parsed in the
 * layer, which keeps one code path for both dialects.
 */
import type { Generated } from 'kysely';

export interface ThreadsTable {
  tenant_id: string;
  thread_id: string;
  created_at: number;
  updated_at: number;
  status: string;
  /** JSON object. */
  metadata: string;
  /** JSON object or NULL (no run finished yet). `values` is an SQL keyword, hence the name. */
  state_values: string | null;
  /**
   * The run that holds the thread (pending with its job queued, or running); NULL when none does.
   * Admission takes it with a guarded update, the run's end releases it or hands it to the next
   * deferred run (migration 0009; written only by `RunLifecycle`).
   */
  active_run_id: string | null;
}

export interface RunsTable {
  /** Insertion order: breaks ties between runs created in the same millisecond. */
  seq: Generated<number>;
  run_id: string;
  thread_id: string;
  tenant_id: string;
  assistant_id: string;
  status: string;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  ended_at: number | null;
  attempts: Generated<number>;
  error: string | null;
  /** JSON object. */
  metadata: string;
  /** JSON object. */
  kwargs: string;
  multitask_strategy: string;
  /** 1 while a pending run waits for its thread (multitask_strategy enqueue), 0 otherwise (migration 0009). */
  deferred: Generated<number>;
  /** The run's queue job as admitted (JSON: base64 payload, attempts, backoff, delay), so any process can enqueue it (migration 0009). */
  job: string | null;
  /** Why the run was dead-lettered, while it is (migration 0010). */
  dead_letter_reason: string | null;
  dead_lettered_at: number | null;
  /** Times the run was re-driven from the dead letter (migration 0010). */
  redrives: Generated<number>;
}

export interface ToolEffectsTable {
  tenant_id: string;
  thread_id: string;
  run_id: string;
  tool_call_id: string;
  tool_name: string;
  state: string;
  content: string | null;
  is_error: number;
  executions: number;
  created_at: number;
  updated_at: number;
}

export interface ThreadUploadsTable {
  tenant_id: string;
  thread_id: string;
  upload_id: string;
  /** Workspace-relative path, e.g. "uploads/report.pdf". */
  path: string;
  name: string;
  /** Original file name as the client sent it. */
  original_name: string;
  type: string;
  mime: string;
  size: number;
  /** Name/content disagreement, or NULL. */
  mismatch: string | null;
  created_at: number;
  /** The run whose input announced the file; NULL while pending. */
  run_id: string | null;
}

export interface ApprovalAuditTable {
  tenant_id: string;
  seq: number;
  thread_id: string;
  run_id: string;
  tool_call_id: string;
  tool_name: string;
  args_sha256: string;
  decision: string;
  reason: string;
  rule: string;
  risk_level: string;
  decided_by: string;
  comment: string;
  /** Server-set approver identity (migration 0008); '' for the rules and for older entries. */
  approver_tenant_id: Generated<string>;
  approver_key_id: Generated<string>;
  created_at: number;
  prev_hash: string;
  hash: string;
}

/** The last entry of each tenant's audit chain; its row is locked while an entry is appended. */
export interface ApprovalAuditHeadsTable {
  tenant_id: string;
  seq: number;
  hash: string;
}

export interface WebhookDeliveriesTable {
  tenant_id: string;
  delivery_id: string;
  run_id: string;
  attempt: number;
  at: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

// ---------------------------------------------------------------------------
// Assistants (migration 0011)

/** An assistant as it is now: the fields of its latest version (`version`). JSON documents as text. */
export interface AssistantsTable {
  tenant_id: string;
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: string;
  context: string;
  metadata: string;
  version: number;
  created_at: number;
  updated_at: number;
}

/** One immutable version of an assistant. */
export interface AssistantVersionsTable {
  tenant_id: string;
  assistant_id: string;
  version: number;
  graph_id: string;
  name: string;
  description: string | null;
  config: string;
  context: string;
  metadata: string;
  created_at: number;
}

// ---------------------------------------------------------------------------
// Crons (migration 0012, issue 12)

/** A cron: its schedule and the run each firing creates (`payload`, JSON). `thread_id` NULL: stateless. */
export interface CronsTable {
  tenant_id: string;
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  schedule: string;
  timezone: string | null;
  end_time: number | null;
  payload: string;
  metadata: string;
  /** 1 or 0. */
  enabled: number;
  on_run_completed: string | null;
  user_id: string | null;
  created_at: number;
  updated_at: number;
}
// Store items (migration 0013, issue 12)

/** One item of the long-term memory store. */
export interface StoreItemsTable {
  tenant_id: string;
  /** The namespace labels joined with "." (labels never contain one). */
  namespace: string;
  item_key: string;
  /** JSON object. */
  value: string;
  /** The indexed text of the value, matched by a text query; NULL when the item is not indexed. */
  search_text: string | null;
  /** JSON array of numbers (the embedding of `search_text`), or NULL. */
  embedding: string | null;
  created_at: number;
  updated_at: number;
  /** The item's time to live, kept so a read with refresh_ttl can extend it; NULL = never expires. */
  ttl_ms: number | null;
  /** Epoch ms after which the item is gone; NULL = never. */
  expires_at: number | null;
}
// Usage ledger (migration 0014, issue 17)

/** Tokens and model calls of one tenant, UTC day and model. */
export interface TokenUsageTable {
  tenant_id: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  model_calls: number;
  /** Runs whose first model call was counted in this row. */
  runs: number;
  updated_at: number;
}

// Record and replay (migration 0015, issue 17)

/** One recorded event of a run: a model call, a tool call, or a replay's outcome. */
export interface RunRecordingsTable {
  tenant_id: string;
  run_id: string;
  /** `model:<turn>`, `tool:<tool call id>` or `replay`: the same event written twice keeps the first row. */
  event_key: string;
  /** Orders a run's events as they happened. */
  seq: number;
  kind: string;
  step: number;
  /** JSON object. */
  payload: string;
  created_at: number;
}
// OAuth grants of remote MCP servers (issue 14)

export interface McpOAuthGrantsTable {
  tenant_id: string;
  server: string;
  /** JSON: the SDK's OAuthTokens, null until the flow completes. */
  tokens: string | null;
  /** JSON: the SDK's OAuthClientInformationMixed (dynamic registration or metadata document URL). */
  client_info: string | null;
  /** JSON: the SDK's OAuthDiscoveryState. */
  discovery: string | null;
  /** Epoch ms the access token expires; null: unknown. */
  expires_at: number | null;
  scope: string | null;
  updated_at: number;
}

export interface McpOAuthFlowsTable {
  state: string;
  tenant_id: string;
  server: string;
  code_verifier: string;
  redirect_uri: string;
  created_at: number;
}

/** A set of tools offered to a model, as recorded, stored once per tenant under its hash (migration 0020). */
export interface RunRecordingToolsetsTable {
  tenant_id: string;
  /** SHA-256 (hex) of `tools`. */
  toolset_hash: string;
  /** JSON array of `{name, description, parameters}`. */
  tools: string;
  created_at: number;
}
// ---------------------------------------------------------------------------

export interface Database {
  threads: ThreadsTable;
  runs: RunsTable;
  tool_effects: ToolEffectsTable;
  thread_uploads: ThreadUploadsTable;
  approval_audit: ApprovalAuditTable;
  approval_audit_heads: ApprovalAuditHeadsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  assistants: AssistantsTable;
  assistant_versions: AssistantVersionsTable;
  // Crons (issue 12)
  crons: CronsTable;
  // Store items (issue 12)
  store_items: StoreItemsTable;
  // Usage ledger (issue 17)
  token_usage: TokenUsageTable;
  // Record and replay (issue 17)
  run_recordings: RunRecordingsTable;
  // OAuth grants of remote MCP servers (issue 14)
  mcp_oauth_grants: McpOAuthGrantsTable;
  mcp_oauth_flows: McpOAuthFlowsTable;
  // Run recordings' tool sets, stored once (issue 9)
  run_recording_toolsets: RunRecordingToolsetsTable;
}

export type SqlDialectName = 'mysql' | 'sqlite';
