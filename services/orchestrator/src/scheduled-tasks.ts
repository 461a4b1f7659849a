/**
 * The scheduled-task tools of seed 003 (`schedule_task`, `list_tasks`, `delete_task`). A task is a
 * cron (issue 12) on the calling run's own thread and tenant, so the API shows it
 * (`client.crons.search({threadId})`) and each firing is an ordinary run admitted by the gateway.
 *
 * Why the store and the scheduler directly: the orchestrator has no admission path and no RPC to
 * the gateway (one would need a proto change); creating a cron is one store row plus one scheduler
 * upsert, the same two writes the gateway makes, while firing — the admission — stays with the
 * gateway's scheduler worker.
 */
import { z } from 'zod';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { cronScheduleProblem, encodeCronFiringData, isIanaTimezone, nextCronTime, type CronScheduler } from '@agentloop/queue';
import type { CronRecord, JsonObject, Store } from '@agentloop/store';
import { errorMessage, newId } from '@agentloop/core';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';

export const SCHEDULED_TASK_TOOL_NAMES = ['schedule_task', 'list_tasks', 'delete_task'] as const;
export type ScheduledTaskToolName = (typeof SCHEDULED_TASK_TOOL_NAMES)[number];
export const isScheduledTaskTool = (name: string): name is ScheduledTaskToolName => (SCHEDULED_TASK_TOOL_NAMES as readonly string[]).includes(name);

const spec = (name: ScheduledTaskToolName, description: string, schema: Record<string, unknown>, displayName: string, idempotent: boolean): ToolSpec =>
  create(ToolSpecSchema, {
    name,
    description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, { category: 'orchestrator', tags: ['builtin', 'scheduling'], idempotent, displayName, availableToSubagent: false }),
  });

export const SCHEDULED_TASK_SPECS: readonly ToolSpec[] = [
  spec(
    'schedule_task',
    [
      'Schedule a task: a prompt that is run later on this conversation, as if the user sent it, once at a given time or recurrently on a cron schedule.',
      'Give exactly one of `at` (run once) or `cron` (recurring). Returns the task id (for delete_task) and when it runs next.',
    ].join('\n'),
    {
      type: 'object',
      properties: {
        prompt: {
          type: 'string',
          description: 'What to do when the task runs, written as an instruction to yourself (e.g. "Summarise the new files in inputs/").',
        },
        at: { type: 'string', description: 'Run once at this time: ISO 8601 with a UTC offset, e.g. "2030-05-01T09:00:00Z" or "2030-05-01T09:00:00+02:00".' },
        cron: {
          type: 'string',
          description: 'Run recurrently: a 5-field cron expression "minute hour day-of-month month day-of-week", e.g. "0 9 * * 1-5" (09:00 on weekdays).',
        },
        timezone: { type: 'string', description: 'IANA time zone the cron expression is read in, e.g. "Europe/Paris" (default UTC). Ignored with `at`.' },
      },
      required: ['prompt'],
    },
    'Scheduling a task',
    false,
  ),
  spec(
    'list_tasks',
    'List the tasks scheduled on this conversation: id, prompt, schedule, time zone and next run time.',
    { type: 'object', properties: {} },
    'Listing scheduled tasks',
    true,
  ),
  spec(
    'delete_task',
    'Delete a task scheduled on this conversation by its id (from schedule_task or list_tasks); it will not run again.',
    { type: 'object', properties: { task_id: { type: 'string', description: 'The id of the task to delete.' } }, required: ['task_id'] },
    'Deleting a scheduled task',
    false,
  ),
];

const ScheduleArgs = z
  .object({
    prompt: z.string().trim().min(1, 'prompt is required: what to do when the task runs'),
    at: z.iso.datetime({ offset: true, message: 'at must be an ISO 8601 date-time with a UTC offset, e.g. 2030-05-01T09:00:00Z' }).optional(),
    cron: z.string().trim().min(1).optional(),
    timezone: z.string().optional(),
  })
  .refine((a) => (a.at === undefined) !== (a.cron === undefined), { message: 'give exactly one of `at` (run once) or `cron` (recurring)' });
const DeleteArgs = z.object({ task_id: z.string().min(1, 'task_id is required') });

/** Marks a cron as one of this thread's tasks (and says which run scheduled it). */
const TASK_METADATA_KEY = 'scheduled_task';

const ok = (value: unknown): ToolCallResult => ({ content: JSON.stringify({ ok: true, ...(value as object) }), isError: false });
const fail = (message: string): ToolCallResult => ({ content: `Error: ${message}`, isError: true, errorCode: 'INVALID_ARGUMENT' });

export interface ScheduledTasksDeps {
  store: Pick<Store, 'createCron' | 'getCron' | 'deleteCron' | 'searchCrons' | 'getRun'>;
  scheduler: Pick<CronScheduler, 'upsert' | 'remove'>;
  /** Clock (tests). */
  now?: () => number;
}

export class ScheduledTasks {
  constructor(private readonly deps: ScheduledTasksDeps) {}

  async execute(call: Pick<ToolCallInput, 'tenantId' | 'threadId' | 'runId' | 'name' | 'args'>): Promise<ToolCallResult> {
    try {
      switch (call.name as ScheduledTaskToolName) {
        case 'schedule_task':
          return await this.schedule(call);
        case 'list_tasks':
          return await this.list(call);
        case 'delete_task':
          return await this.delete(call);
        default:
          return fail(`unknown scheduled-task tool ${call.name}`);
      }
    } catch (err) {
      return { content: `Error: ${errorMessage(err)}`, isError: true, errorCode: 'INTERNAL' };
    }
  }

  private async schedule(call: Pick<ToolCallInput, 'tenantId' | 'threadId' | 'runId' | 'args'>): Promise<ToolCallResult> {
    const parsed = ScheduleArgs.safeParse(call.args);
    if (!parsed.success) return fail(parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; '));
    const a = parsed.data;
    const now = (this.deps.now ?? Date.now)();
    let schedule: string;
    let timezone: string | undefined;
    let endTime: Date | undefined;
    if (a.at !== undefined) {
      const at = new Date(a.at);
      if (at.getTime() <= now) return fail(`at (${a.at}) is in the past; give a future time`);
      // A one-off task is a cron that matches that second only (UTC) and ends right after it.
      schedule = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
      endTime = new Date(at.getTime() + 999);
    } else {
      if (a.timezone !== undefined && !isIanaTimezone(a.timezone)) return fail(`timezone "${a.timezone}" is not an IANA time zone (e.g. "Europe/Paris")`);
      const problem = cronScheduleProblem(a.cron!, { timezone: a.timezone });
      if (problem) return fail(`cron ${problem}`);
      schedule = a.cron!;
      timezone = a.timezone;
    }
    // The task runs like the run that scheduled it: same assistant, agent configuration and webhook.
    const run = await this.deps.store.getRun(call.tenantId, call.runId);
    const kwargs = run?.kwargs ?? {};
    const payload: JsonObject = {
      input: { messages: [{ role: 'user', content: a.prompt }] },
      multitask_strategy: 'enqueue',
      ...(kwargs.config && typeof kwargs.config === 'object' ? { config: kwargs.config } : {}),
      ...(typeof kwargs.webhook === 'string' ? { webhook: kwargs.webhook } : {}),
    };
    const cron = await this.deps.store.createCron({
      tenantId: call.tenantId,
      cronId: newId(),
      assistantId: run?.assistantId ?? 'agent',
      threadId: call.threadId,
      schedule,
      timezone,
      endTime,
      payload,
      metadata: { [TASK_METADATA_KEY]: true, scheduled_by_run: call.runId, ...(a.at ? { once_at: new Date(a.at).toISOString() } : {}) },
      enabled: true,
      onRunCompleted: undefined,
      userId: undefined,
    });
    let nextAt: number | undefined;
    try {
      ({ nextAt } = await this.deps.scheduler.upsert({
        id: cron.cronId,
        pattern: schedule,
        timezone,
        endAt: endTime?.getTime(),
        data: encodeCronFiringData({ tenantId: call.tenantId, cronId: cron.cronId }),
      }));
    } catch (err) {
      await this.deps.store.deleteCron(call.tenantId, cron.cronId).catch(() => undefined);
      throw err;
    }
    return ok({
      task_id: cron.cronId,
      prompt: a.prompt,
      schedule: a.at ? `once at ${new Date(a.at).toISOString()}` : schedule,
      timezone: timezone ?? 'UTC',
      next_run: nextAt ? new Date(nextAt).toISOString() : null,
    });
  }

  private async list(call: Pick<ToolCallInput, 'tenantId' | 'threadId'>): Promise<ToolCallResult> {
    const crons = await this.deps.store.searchCrons(call.tenantId, { threadId: call.threadId, limit: 100, offset: 0, sortBy: 'created_at', sortOrder: 'asc' });
    const now = (this.deps.now ?? Date.now)();
    return ok({ tasks: crons.map((c) => describeTask(c, now)) });
  }

  private async delete(call: Pick<ToolCallInput, 'tenantId' | 'threadId' | 'args'>): Promise<ToolCallResult> {
    const parsed = DeleteArgs.safeParse(call.args);
    if (!parsed.success) return fail(parsed.error.issues.map((i) => i.message).join('; '));
    const id = parsed.data.task_id;
    const cron = await this.deps.store.getCron(call.tenantId, id);
    // Another thread's (or tenant's) task is "not found": the agent only manages its own conversation's tasks.
    if (!cron || cron.threadId !== call.threadId) return fail(`no task ${id} is scheduled on this conversation; list_tasks shows the ones that are`);
    await this.deps.store.deleteCron(call.tenantId, id);
    await this.deps.scheduler.remove(id);
    return ok({ deleted: id });
  }
}

function describeTask(c: CronRecord, now: number) {
  const messages = (c.payload.input as { messages?: Array<{ content?: unknown }> } | undefined)?.messages;
  const prompt = typeof messages?.[0]?.content === 'string' ? messages[0].content : null;
  let next: number | undefined;
  try {
    next = c.enabled ? nextCronTime(c.schedule, now, { timezone: c.timezone, endAt: c.endTime?.getTime(), allowSeconds: true }) : undefined;
  } catch {
    next = undefined;
  }
  const once = typeof c.metadata.once_at === 'string' ? c.metadata.once_at : undefined;
  return {
    task_id: c.cronId,
    prompt,
    schedule: once ? `once at ${once}` : c.schedule,
    timezone: c.timezone ?? 'UTC',
    enabled: c.enabled,
    next_run: next ? new Date(next).toISOString() : null,
  };
}
