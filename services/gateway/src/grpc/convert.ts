/**
 * Between api.proto messages and what the HTTP routes work with: store records → messages, and
 * requests → the very bodies the HTTP routes validate (run-schema's zod schema), with validation
 * errors naming the proto fields the caller actually set.
 */
import { errorMessage, JsonDepthError, MAX_JSON_DEPTH, parseJsonWithin } from '@agentloop/core';
import {
  create,
  RunInfoSchema,
  ThreadInfoSchema,
  ThreadStateSchema,
  type CreateRunRequest,
  type RunInfo,
  type ThreadInfo,
  type ThreadState,
} from '@agentloop/proto';
import type { RunRecord, ThreadRecord } from '@agentloop/store';
import { invalid, RequestValidationError } from '../errors.js';
import { RunCreateBody } from '../run-schema.js';
import { toApiThreadState } from '../serialize.js';
import { parseRequest, Uuid } from '../validation.js';

/** JSON text of a document; '' for "none" (undefined or null). */
export const jsonText = (v: unknown): string => (v === undefined || v === null ? '' : JSON.stringify(v));

const ms = (d: Date): bigint => BigInt(d.getTime());

/**
 * A `*_json` request field: undefined when empty, else the parsed value. INVALID_ARGUMENT naming
 * `field` when it is not JSON or nests deeper than MAX_JSON_DEPTH (as HTTP bodies; checked by a
 * linear scan before parsing).
 */
export function parseJsonField(text: string, field: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return parseJsonWithin(text, MAX_JSON_DEPTH);
  } catch (err) {
    if (err instanceof JsonDepthError) throw invalid(field, `is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects (the limit); flatten it`);
    throw invalid(field, `is not valid JSON: ${errorMessage(err)}`);
  }
}

/** A thread or run id field: must be a UUID, as in the HTTP paths. */
export function uuidField(value: string, field: string): string {
  if (!Uuid.safeParse(value).success) throw invalid(field, value === '' ? 'is required (a UUID)' : 'expected a UUID');
  return value;
}

/**
 * Validation errors name fields as the HTTP body does (`body.input`); over gRPC they name the
 * request field instead (`input_json`), keeping any nested path (`config_json.recursion_limit`).
 */
export function withProtoFieldNames(err: unknown, fields: Readonly<Record<string, string>>): unknown {
  if (!(err instanceof RequestValidationError)) return err;
  return new RequestValidationError(
    err.issues.map((issue) => {
      const [part, key, ...rest] = issue.path.split('.');
      const field = part === 'body' && key !== undefined ? fields[key] : undefined;
      return { path: field === undefined ? issue.path : [field, ...rest].join('.'), message: issue.message };
    }),
  );
}

/** RunCreateBody key → CreateRunRequest field. */
export const RUN_REQUEST_FIELDS: Readonly<Record<string, string>> = {
  assistant_id: 'assistant_id',
  input: 'input_json',
  command: 'command_json',
  config: 'config_json',
  metadata: 'metadata_json',
  webhook: 'webhook',
  multitask_strategy: 'multitask_strategy',
  stream_mode: 'stream_mode',
  if_not_exists: 'if_not_exists_create',
};

/**
 * The HTTP run-creating body a CreateRunRequest stands for, validated by the same zod schema
 * (run-schema.ts); proto3 defaults (empty strings and lists, false) mean "not given".
 */
export function runCreateBody(req: CreateRunRequest): RunCreateBody {
  try {
    const body = {
      assistant_id: req.assistantId === '' ? 'agent' : req.assistantId,
      input: parseJsonField(req.inputJson, 'input_json'),
      command: parseJsonField(req.commandJson, 'command_json'),
      config: parseJsonField(req.configJson, 'config_json'),
      metadata: parseJsonField(req.metadataJson, 'metadata_json'),
      webhook: req.webhook === '' ? undefined : req.webhook,
      multitask_strategy: req.multitaskStrategy === '' ? undefined : req.multitaskStrategy,
      stream_mode: req.streamMode.length === 0 ? undefined : req.streamMode,
      if_not_exists: req.ifNotExistsCreate ? 'create' : undefined,
    };
    return parseRequest(RunCreateBody, body, 'body');
  } catch (err) {
    throw withProtoFieldNames(err, RUN_REQUEST_FIELDS);
  }
}

export function toThreadInfo(t: ThreadRecord): ThreadInfo {
  return create(ThreadInfoSchema, {
    threadId: t.threadId,
    status: t.status,
    metadataJson: jsonText(t.metadata),
    valuesJson: jsonText(t.values),
    createdAtMs: ms(t.createdAt),
    updatedAtMs: ms(t.updatedAt),
  });
}

export function toRunInfo(r: RunRecord): RunInfo {
  return create(RunInfoSchema, {
    runId: r.runId,
    threadId: r.threadId,
    assistantId: r.assistantId,
    status: r.status,
    metadataJson: jsonText(r.metadata),
    createdAtMs: ms(r.createdAt),
    updatedAtMs: ms(r.updatedAt),
    kwargsJson: jsonText(r.kwargs),
    multitaskStrategy: r.multitaskStrategy,
    ...(r.deadLetter ? { deadLetter: { reason: r.deadLetter.reason, deadLetteredAtMs: ms(r.deadLetter.at) } } : {}),
  });
}

/** The thread's state exactly as HTTP GET /threads/{id}/state builds it (serialize.ts), as a message. */
export function toThreadState(t: ThreadRecord): ThreadState {
  const s = toApiThreadState(t);
  return create(ThreadStateSchema, {
    threadId: t.threadId,
    valuesJson: JSON.stringify(s.values),
    next: s.next,
    tasksJson: JSON.stringify(s.tasks),
    interruptsJson: JSON.stringify(s.interrupts),
    metadataJson: JSON.stringify(s.metadata),
    createdAtMs: BigInt(Date.parse(s.created_at)),
  });
}
