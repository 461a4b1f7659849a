/**
 * Crons (issue 12): LangGraph Platform's scheduled runs. The store row is what the API shows; the
 * scheduler (BullMQ job schedulers in cluster mode, the SQLite scheduler embedded) owns the ticks,
 * and this gateway's worker turns each tick into an ordinary run through `RunService.create` — the
 * same admission as `POST /threads/{id}/runs` (quota, webhook, events, tenant, multitask).
 */
import {
  cronScheduleProblem,
  decodeCronFiringData,
  encodeCronFiringData,
  isIanaTimezone,
  nextCronTime,
  type CronScheduler,
  type Firing,
  type QueueWorker,
} from '@agentloop/queue';
import type { CronRecord, Store } from '@agentloop/store';
import { errorMessage, newId, type Logger } from '@agentloop/core';
import { ApiError, invalid, notFound, statusOf } from './errors.js';
import { runPayloadOf, type CronCreateBody, type CronCountBody, type CronPatchBody, type CronSearchBody } from './cron-schema.js';
import { RunCreateBody } from './run-schema.js';
import type { RunService } from './run-service.js';
import { resolveRunAssistant } from './assistant-registry.js';

export interface CronServiceDeps {
  store: Store;
  runs: RunService;
  logger: Logger;
  /** Without one the cron endpoints answer 503 (a deployment that wires no scheduler). */
  scheduler?: CronScheduler | undefined;
  /** Accept a 6-field schedule with leading seconds (tests). */
  allowSeconds?: boolean;
}

const iso = (d: Date | undefined): string | null => (d ? d.toISOString() : null);

export class CronService {
  private readonly log: Logger;
  private worker: QueueWorker | undefined;

  constructor(private readonly deps: CronServiceDeps) {
    this.log = deps.logger.child({ component: 'crons' });
  }

  /** The cron as the SDK's `Cron` type has it. */
  toApi(c: CronRecord): Record<string, unknown> {
    return {
      cron_id: c.cronId,
      assistant_id: c.assistantId,
      thread_id: c.threadId ?? null,
      on_run_completed: c.onRunCompleted ?? (c.threadId ? null : 'delete'),
      end_time: iso(c.endTime),
      schedule: c.schedule,
      timezone: c.timezone ?? null,
      created_at: c.createdAt.toISOString(),
      updated_at: c.updatedAt.toISOString(),
      payload: { ...c.payload, assistant_id: c.assistantId, metadata: c.metadata },
      user_id: c.userId ?? null,
      next_run_date: iso(this.nextRun(c)),
      metadata: c.metadata,
      enabled: c.enabled,
    };
  }

  /** A cron on `threadId` (404 when the tenant has no such thread), or a stateless one without. */
  async create(tenantId: string, threadId: string | undefined, body: CronCreateBody): Promise<CronRecord> {
    if (threadId !== undefined && !(await this.deps.store.getThread(tenantId, threadId))) throw notFound(`Thread ${threadId} not found.`);
    const scheduler = this.requireScheduler();
    // The tenant's assistant must exist now (404 otherwise); each firing uses its version in use then.
    await resolveRunAssistant(this.deps.store, tenantId, body.assistant_id);
    this.checkSchedule(body.schedule, body.timezone ?? undefined);
    if (body.on_run_completed && threadId !== undefined) throw invalid('body.on_run_completed', 'applies to stateless crons (POST /runs/crons) only');
    // The run fields are validated now, as a run would be, so a firing does not fail on them later.
    const payload = runPayloadOf(body);
    const cron = await this.deps.store.createCron({
      tenantId,
      cronId: newId(),
      assistantId: body.assistant_id,
      threadId,
      schedule: body.schedule.trim(),
      timezone: body.timezone ?? undefined,
      endTime: body.end_time ? new Date(body.end_time) : undefined,
      payload,
      metadata: body.metadata ?? {},
      enabled: body.enabled ?? true,
      onRunCompleted: threadId === undefined ? (body.on_run_completed ?? 'delete') : undefined,
      userId: undefined,
    });
    try {
      await this.syncSchedule(scheduler, cron);
    } catch (err) {
      await this.deps.store.deleteCron(tenantId, cron.cronId).catch(() => undefined);
      throw err;
    }
    return cron;
  }

  async get(tenantId: string, cronId: string): Promise<CronRecord> {
    const cron = await this.deps.store.getCron(tenantId, cronId);
    if (!cron) throw notFound(`Cron ${cronId} not found.`);
    return cron;
  }

  async update(tenantId: string, cronId: string, body: CronPatchBody): Promise<CronRecord> {
    const scheduler = this.requireScheduler();
    const current = await this.get(tenantId, cronId);
    const schedule = body.schedule ?? current.schedule;
    const timezone = body.timezone === undefined ? current.timezone : (body.timezone ?? undefined);
    // Checked when changed: a task's one-off schedule (6 fields, written by schedule_task) stays patchable.
    if (body.schedule || body.timezone !== undefined) this.checkSchedule(schedule, timezone);
    if (body.on_run_completed && current.threadId !== undefined) throw invalid('body.on_run_completed', 'applies to stateless crons only');
    const runFields = runPayloadOf(body);
    const updated = await this.deps.store.updateCron(tenantId, cronId, {
      ...(body.schedule ? { schedule: body.schedule.trim() } : {}),
      ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
      ...(body.end_time !== undefined ? { endTime: body.end_time === null ? null : new Date(body.end_time) } : {}),
      ...(Object.keys(runFields).length > 0 ? { payload: { ...current.payload, ...runFields } } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
      ...(body.enabled !== undefined && body.enabled !== null ? { enabled: body.enabled } : {}),
      ...(body.on_run_completed ? { onRunCompleted: body.on_run_completed } : {}),
    });
    if (!updated) throw notFound(`Cron ${cronId} not found.`);
    await this.syncSchedule(scheduler, updated);
    return updated;
  }

  async delete(tenantId: string, cronId: string): Promise<void> {
    const scheduler = this.requireScheduler();
    if (!(await this.deps.store.deleteCron(tenantId, cronId))) throw notFound(`Cron ${cronId} not found.`);
    await scheduler.remove(cronId);
  }

  search(tenantId: string, q: CronSearchBody): Promise<CronRecord[]> {
    return this.deps.store.searchCrons(tenantId, {
      ...filterOf(q),
      limit: q.limit,
      offset: q.offset,
      ...(q.sort_by ? { sortBy: q.sort_by } : {}),
      ...(q.sort_order ? { sortOrder: q.sort_order } : {}),
    });
  }

  count(tenantId: string, q: CronCountBody): Promise<number> {
    return this.deps.store.countCrons(tenantId, filterOf(q));
  }

  /** Starts handling ticks (this gateway takes its share; each tick goes to one worker in the deployment). */
  async start(): Promise<void> {
    if (!this.deps.scheduler || this.worker) return;
    this.worker = await this.deps.scheduler.process((f) => this.fire(f));
  }

  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.close();
  }

  /** One tick: an ordinary run, unless the cron is gone, disabled or past its end time. */
  async fire(firing: Firing): Promise<void> {
    const { tenantId, cronId } = decodeCronFiringData(firing.data);
    const cron = await this.deps.store.getCron(tenantId, cronId);
    const log = this.log.child({ tenant: tenantId, cron_id: cronId });
    if (!cron) {
      // Deleted while its tick was under way (or its row was lost): stop the schedule too.
      await this.deps.scheduler?.remove(cronId);
      return;
    }
    if (!cron.enabled || (cron.endTime && firing.tickAt > cron.endTime.getTime())) return;
    if (cron.threadId !== undefined && !(await this.deps.store.getThread(tenantId, cron.threadId))) {
      // Its thread was deleted: the cron goes with it rather than failing at every tick.
      await this.deps.store.deleteCron(tenantId, cronId);
      await this.deps.scheduler?.remove(cronId);
      log.info({ thread_id: cron.threadId }, 'cron deleted: its thread no longer exists');
      return;
    }
    // Crons default to "enqueue": a tick that finds the thread busy runs after it instead of being lost.
    const body = RunCreateBody.parse({
      multitask_strategy: 'enqueue',
      ...cron.payload,
      assistant_id: cron.assistantId,
      metadata: { ...cron.metadata, cron_id: cron.cronId },
      ...(cron.threadId === undefined ? { on_completion: cron.onRunCompleted ?? 'delete' } : {}),
    });
    try {
      const created = await this.deps.runs.create(tenantId, cron.threadId, body);
      log.info({ run_id: created.run.runId, thread_id: created.run.threadId, tick_at: new Date(firing.tickAt).toISOString() }, 'cron fired a run');
      if (created.deleteOnCompletion) this.deps.runs.cleanupWhenDone(tenantId, created.run);
    } catch (err) {
      // Refused like a client's run would be (quota, thread gone, busy thread): this tick is skipped, not retried.
      if (statusOf(err) < 500) {
        log.warn({ status: statusOf(err), err: errorMessage(err) }, 'cron tick skipped: its run was refused');
        return;
      }
      throw err;
    }
  }

  private nextRun(c: CronRecord): Date | undefined {
    if (!c.enabled) return undefined;
    try {
      const t = nextCronTime(c.schedule, Date.now(), { timezone: c.timezone, endAt: c.endTime?.getTime(), allowSeconds: true });
      return t === undefined ? undefined : new Date(t);
    } catch {
      return undefined;
    }
  }

  private checkSchedule(schedule: string, timezone: string | undefined): void {
    if (timezone !== undefined && !isIanaTimezone(timezone))
      throw invalid('body.timezone', `"${timezone}" is not an IANA time zone (e.g. "Europe/Paris", "UTC")`);
    const problem = cronScheduleProblem(schedule, { timezone, allowSeconds: this.deps.allowSeconds ?? false });
    if (problem) throw invalid('body.schedule', problem);
  }

  private async syncSchedule(scheduler: CronScheduler, cron: CronRecord): Promise<void> {
    if (!cron.enabled) {
      await scheduler.remove(cron.cronId);
      return;
    }
    await scheduler.upsert({
      id: cron.cronId,
      pattern: cron.schedule,
      timezone: cron.timezone,
      endAt: cron.endTime?.getTime(),
      data: encodeCronFiringData({ tenantId: cron.tenantId, cronId: cron.cronId }),
    });
  }

  private requireScheduler(): CronScheduler {
    if (!this.deps.scheduler) throw new ApiError('UNAVAILABLE', 'Crons are not available: this deployment runs no scheduler.');
    return this.deps.scheduler;
  }
}

function filterOf(q: CronCountBody) {
  return {
    ...(q.assistant_id ? { assistantId: q.assistant_id } : {}),
    ...(q.thread_id ? { threadId: q.thread_id } : {}),
    ...(q.enabled !== undefined && q.enabled !== null ? { enabled: q.enabled } : {}),
    ...(q.metadata ? { metadata: q.metadata } : {}),
  };
}
