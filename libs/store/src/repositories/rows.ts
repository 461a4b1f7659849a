/**
 * Row mappers and helpers shared by the repositories and `RunLifecycle`: database rows to
 * records, id validation, and the dialect differences in error codes. Kept apart from the
 * queries so the lifecycle (which writes its own guarded SQL) maps rows the same way.
 */
import type { Selectable } from 'kysely';
import { AgentLoopError, InvalidArgumentError } from '@agentloop/core';
import { MAX_ID_LENGTH } from '../migrations.js';
import type { ApprovalAuditTable, RunsTable, ThreadsTable, ThreadUploadsTable, ToolEffectsTable, WebhookDeliveriesTable } from '../schema.js';
import type {
  AuditDecision,
  AuditEntry,
  AuditRiskLevel,
  JsonObject,
  RunRecord,
  RunStatusName,
  ThreadRecord,
  ThreadStatus,
  ToolEffect,
  ToolEffectState,
  UploadRecord,
  WebhookAttempt,
} from '../types.js';

// ---------------------------------------------------------------------------
// Row mapping

export function parseObject(text: string, what: string): JsonObject {
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AgentLoopError('INTERNAL', `Stored ${what} is not a JSON object`);
  }
  return value as JsonObject;
}

export const millisToDate = (v: number | string | bigint): Date => new Date(Number(v));
const optionalDate = (v: number | string | bigint | null): Date | null => (v === null ? null : millisToDate(v));

export function toEffect(row: Selectable<ToolEffectsTable>): ToolEffect {
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

export function toAudit(row: Selectable<ApprovalAuditTable>): AuditEntry {
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

export function toWebhookAttempt(r: Selectable<WebhookDeliveriesTable>): WebhookAttempt {
  return {
    tenantId: r.tenant_id,
    deliveryId: r.delivery_id,
    runId: r.run_id,
    attempt: Number(r.attempt),
    at: millisToDate(r.at),
    outcome: r.outcome as WebhookAttempt['outcome'],
    statusCode: r.status_code === null ? null : Number(r.status_code),
    error: r.error,
    durationMs: Number(r.duration_ms),
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

/**
 * The columns a run record is made of: every column of `runs` but `job` (the queue job kept for a
 * redrive or a promotion, base64 — as large as the run's input and config), which the record
 * does not carry: the run's hot reads (its take, its end, `runs.wait`'s) select only these.
 */
export const RUN_RECORD_COLUMNS = [
  'seq',
  'run_id',
  'thread_id',
  'tenant_id',
  'assistant_id',
  'status',
  'created_at',
  'updated_at',
  'started_at',
  'ended_at',
  'attempts',
  'error',
  'metadata',
  'kwargs',
  'multitask_strategy',
  'deferred',
  'dead_letter_reason',
  'dead_lettered_at',
  'redrives',
] as const satisfies ReadonlyArray<keyof RunsTable>;
export type RunRow = Pick<Selectable<RunsTable>, (typeof RUN_RECORD_COLUMNS)[number]>;
// A column added to `runs` fails to compile here until it is listed above (or left out on purpose like `job`).
type UnlistedRunColumns = Exclude<keyof RunsTable, (typeof RUN_RECORD_COLUMNS)[number] | 'job'>;
const everyRunColumnListed: [UnlistedRunColumns] extends [never] ? true : UnlistedRunColumns = true;
void everyRunColumnListed;

/**
 * The record of a run row. Its request (`kwargs`: input messages, config — the largest column) is
 * parsed when first read: most reads of a run on a run's way (the worker's take, the end,
 * `runs.wait`'s reads) never look at it, and parsing it was most of the JSON parsing of run rows
 * per run (issue 9). A stored request that is not a JSON object throws when read.
 */
export function toRun(row: RunRow): RunRecord {
  const kwargsText = row.kwargs;
  let kwargs: JsonObject | undefined;
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
    get kwargs(): JsonObject {
      return (kwargs ??= parseObject(kwargsText, 'run kwargs'));
    },
    set kwargs(value: JsonObject) {
      kwargs = value;
    },
    multitaskStrategy: row.multitask_strategy,
    deferred: Number(row.deferred) === 1,
    deadLetter:
      row.dead_letter_reason !== null && row.dead_letter_reason !== undefined
        ? { reason: row.dead_letter_reason, at: millisToDate(row.dead_lettered_at ?? row.updated_at) }
        : null,
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
    throw new InvalidArgumentError(
      `Invalid ${field} ${JSON.stringify(value)}: expected 1-${MAX_ID_LENGTH} characters without surrounding spaces or control characters`,
    );
  }
}

export function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown };
  return e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062 || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

// Owned by libs/core (sqlite-busy.ts), which the queue's connection uses too (issue 9).
export { isSqliteBusy } from '@agentloop/core';

/** Structural JSON equality, insensitive to key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && jsonEqual((a as JsonObject)[k], (b as JsonObject)[k]));
}
