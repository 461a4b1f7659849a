/** Request bodies of the cron endpoints (issue 12), as `@langchain/langgraph-sdk` v1.15 sends them. */
import { z } from 'zod';
import { CRON_SORT_FIELDS } from '@agentloop/store';
import { RunCreateBody } from './run-schema.js';
import { JsonObjectSchema, MetadataSchema } from './validation.js';

const EndTime = z.iso.datetime({ offset: true, message: 'end_time must be an ISO 8601 date-time, e.g. 2030-01-01T00:00:00Z' });

/** The run each firing creates: the run-creation fields (the cron's own fields are taken out before it is stored). */
const RunFields = RunCreateBody.pick({
  input: true,
  config: true,
  context: true,
  interrupt_before: true,
  interrupt_after: true,
  webhook: true,
  multitask_strategy: true,
  checkpoint_during: true,
  durability: true,
  stream_mode: true,
  stream_subgraphs: true,
  stream_resumable: true,
});

export const CronCreateBody = RunFields.extend({
  assistant_id: z.string().min(1, 'assistant_id is required: the assistant id or the graph id "agent"'),
  schedule: z.string().min(1, 'schedule is required: a 5-field cron expression, e.g. "*/15 * * * *"'),
  timezone: z.string().nullish(),
  end_time: EndTime.nullish(),
  metadata: MetadataSchema.nullish(),
  enabled: z.boolean().nullish(),
  on_run_completed: z.enum(['delete', 'keep']).nullish(),
});
export type CronCreateBody = z.infer<typeof CronCreateBody>;

export const CronPatchBody = RunFields.partial().extend({
  schedule: z.string().min(1).nullish(),
  timezone: z.string().nullish(),
  end_time: EndTime.nullish(),
  metadata: MetadataSchema.nullish(),
  enabled: z.boolean().nullish(),
  on_run_completed: z.enum(['delete', 'keep']).nullish(),
});
export type CronPatchBody = z.infer<typeof CronPatchBody>;

/** The run fields of a body, as stored in the cron's payload (absent fields left out). */
export function runPayloadOf(body: Partial<z.infer<typeof RunFields>>): Record<string, unknown> {
  const keys = Object.keys(RunFields.shape) as (keyof typeof RunFields.shape)[];
  return Object.fromEntries(keys.filter((k) => body[k] !== undefined && body[k] !== null).map((k) => [k, body[k]]));
}

export const CRON_SELECT_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'end_time',
  'schedule',
  'created_at',
  'updated_at',
  'user_id',
  'payload',
  'next_run_date',
  'metadata',
  'now',
  'timezone',
  'enabled',
  'on_run_completed',
] as const;

const CronFilterFields = {
  assistant_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  enabled: z.boolean().nullish(),
  metadata: JsonObjectSchema.nullish(),
};

export const CronSearchBody = z.object({
  ...CronFilterFields,
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(CRON_SORT_FIELDS).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.enum(CRON_SELECT_FIELDS)).nullish(),
});
export type CronSearchBody = z.infer<typeof CronSearchBody>;

export const CronCountBody = z.object(CronFilterFields);
export type CronCountBody = z.infer<typeof CronCountBody>;

export const CronParams = z.object({ cron_id: z.string().min(1).max(128) });
