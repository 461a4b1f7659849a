/**
 * CreateCron, UpdateCron, DeleteCron, SearchCrons, CountCrons: HTTP's /runs/crons routes over gRPC.
 * Each request becomes the HTTP body, validated by the same schemas (cron-schema.ts) and served by
 * the same CronService, so both APIs schedule, check and scope crons alike.
 */
import { create, CountResponseSchema, CronInfoSchema, DeleteCronResponseSchema, SearchCronsResponseSchema, type CronInfo } from '@agentloop/proto';
import { CronCountBody, CronCreateBody, CronParams, CronPatchBody, CronSearchBody } from '../../cron-schema.js';
import { parseRequest } from '../../validation.js';
import type { CallScope, GrpcContext } from '../call.js';
import { jsonText, parseJsonField, uuidField, withProtoFieldNames } from '../convert.js';
import type { RequestOf, ResponseOf } from '../definition.js';

/** Cron body key → request field, for validation errors. */
const CRON_REQUEST_FIELDS: Readonly<Record<string, string>> = {
  cron_id: 'cron_id',
  assistant_id: 'assistant_id',
  thread_id: 'thread_id',
  schedule: 'schedule',
  timezone: 'timezone',
  end_time: 'end_time',
  input: 'input_json',
  config: 'config_json',
  context: 'context_json',
  metadata: 'metadata_json',
  webhook: 'webhook',
  multitask_strategy: 'multitask_strategy',
  enabled: 'enabled',
  on_run_completed: 'on_run_completed',
  limit: 'limit',
  offset: 'offset',
  sort_by: 'sort_by',
  sort_order: 'sort_order',
};

/** proto3's "" means "not given". */
const given = (s: string): string | undefined => (s === '' ? undefined : s);
/** An `optional string` that clears with "": unset → unchanged, "" → null (HTTP's clearing value). */
const clearable = (s: string | undefined): string | null | undefined => (s === undefined ? undefined : s === '' ? null : s);
const msOf = (iso: unknown): bigint => BigInt(Date.parse(String(iso)));

/** The run fields a cron request carries, as the HTTP body has them. */
function runFieldsOf(req: RequestOf<'createCron'> | RequestOf<'updateCron'>) {
  return {
    input: parseJsonField(req.inputJson, 'input_json'),
    config: parseJsonField(req.configJson, 'config_json'),
    context: parseJsonField(req.contextJson, 'context_json'),
    metadata: parseJsonField(req.metadataJson, 'metadata_json'),
    webhook: given(req.webhook),
    multitask_strategy: given(req.multitaskStrategy),
    enabled: req.enabled,
    on_run_completed: given(req.onRunCompleted),
  };
}

/** The cron as HTTP shows it (CronService.toApi) → the message. */
function toCronInfo(api: Record<string, unknown>): CronInfo {
  const str = (k: string): string => (typeof api[k] === 'string' ? (api[k] as string) : '');
  return create(CronInfoSchema, {
    cronId: str('cron_id'),
    assistantId: str('assistant_id'),
    threadId: str('thread_id'),
    schedule: str('schedule'),
    timezone: str('timezone'),
    endTime: str('end_time'),
    payloadJson: jsonText(api.payload),
    metadataJson: jsonText(api.metadata),
    enabled: api.enabled === true,
    onRunCompleted: str('on_run_completed'),
    nextRunDate: str('next_run_date'),
    createdAtMs: msOf(api.created_at),
    updatedAtMs: msOf(api.updated_at),
  });
}

/** Runs `fn`, naming the request's fields (not the HTTP body's) in its validation errors. */
async function withCronFields<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw withProtoFieldNames(err, CRON_REQUEST_FIELDS);
  }
}

export function cronHandlers(ctx: GrpcContext) {
  const { crons } = ctx;
  const cronIdOf = (cronId: string): string => parseRequest(CronParams, { cron_id: cronId }, 'body').cron_id;
  return {
    createCron(req: RequestOf<'createCron'>, { tenant }: CallScope): Promise<ResponseOf<'createCron'>> {
      return withCronFields(async () => {
        const threadId = req.threadId === '' ? undefined : uuidField(req.threadId, 'thread_id');
        const body = parseRequest(
          CronCreateBody,
          {
            ...runFieldsOf(req),
            assistant_id: req.assistantId === '' ? 'agent' : req.assistantId,
            schedule: req.schedule,
            timezone: given(req.timezone),
            end_time: given(req.endTime),
          },
          'body',
        );
        return toCronInfo(crons.toApi(await crons.create(tenant, threadId, body)));
      });
    },

    updateCron(req: RequestOf<'updateCron'>, { tenant }: CallScope): Promise<ResponseOf<'updateCron'>> {
      return withCronFields(async () => {
        const cronId = cronIdOf(req.cronId);
        const body = parseRequest(
          CronPatchBody,
          { ...runFieldsOf(req), schedule: given(req.schedule), timezone: clearable(req.timezone), end_time: clearable(req.endTime) },
          'body',
        );
        return toCronInfo(crons.toApi(await crons.update(tenant, cronId, body)));
      });
    },

    deleteCron(req: RequestOf<'deleteCron'>, { tenant }: CallScope): Promise<ResponseOf<'deleteCron'>> {
      return withCronFields(async () => {
        await crons.delete(tenant, cronIdOf(req.cronId));
        return create(DeleteCronResponseSchema, {});
      });
    },

    searchCrons(req: RequestOf<'searchCrons'>, { tenant }: CallScope): Promise<ResponseOf<'searchCrons'>> {
      return withCronFields(async () => {
        const body = parseRequest(
          CronSearchBody,
          {
            assistant_id: given(req.assistantId),
            thread_id: given(req.threadId),
            enabled: req.enabled,
            metadata: parseJsonField(req.metadataJson, 'metadata_json'),
            limit: req.limit === 0 ? undefined : req.limit,
            offset: req.offset,
            sort_by: given(req.sortBy),
            sort_order: given(req.sortOrder),
          },
          'body',
        );
        const found = await crons.search(tenant, body);
        return create(SearchCronsResponseSchema, { crons: found.map((c) => toCronInfo(crons.toApi(c))) });
      });
    },

    countCrons(req: RequestOf<'countCrons'>, { tenant }: CallScope): Promise<ResponseOf<'countCrons'>> {
      return withCronFields(async () => {
        const body = parseRequest(
          CronCountBody,
          {
            assistant_id: given(req.assistantId),
            thread_id: given(req.threadId),
            enabled: req.enabled,
            metadata: parseJsonField(req.metadataJson, 'metadata_json'),
          },
          'body',
        );
        return create(CountResponseSchema, { count: BigInt(await crons.count(tenant, body)) });
      });
    },
  };
}
