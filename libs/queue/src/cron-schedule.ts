/**
 * Cron expressions for schedulers and their callers, parsed by `cron-parser` (never by hand).
 * The API takes the classic 5 fields (minute hour day month weekday); a 6th leading seconds field
 * is accepted only where the caller allows it (tests use it to tick every few seconds).
 */
import cronParser from 'cron-parser';
import { InvalidArgumentError } from '@agentloop/core';

export interface CronScheduleOptions {
  /** IANA time zone the schedule is read in (default UTC). */
  timezone?: string | undefined;
  /** Accept a 6-field expression whose first field is seconds. */
  allowSeconds?: boolean;
}

/** Why `schedule` is not an acceptable cron expression, or undefined when it is. */
export function cronScheduleProblem(schedule: string, opts: CronScheduleOptions = {}): string | undefined {
  const fields = schedule.trim().split(/\s+/).length;
  const allowed = opts.allowSeconds ? [5, 6] : [5];
  if (!allowed.includes(fields)) {
    return `"${schedule}" has ${fields} field(s); a cron schedule has 5: minute hour day-of-month month day-of-week (e.g. "*/15 * * * *")`;
  }
  try {
    cronParser.parseExpression(schedule, { tz: opts.timezone ?? 'UTC' });
    return undefined;
  } catch (err) {
    return `"${schedule}" is not a valid cron schedule: ${(err as Error).message}`;
  }
}

/** True when `tz` is an IANA time zone name this runtime knows. */
export function isIanaTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0;
  } catch {
    return false;
  }
}

/**
 * The first time strictly after `after` (epoch ms) the schedule fires, or undefined when none
 * comes before `endAt`. Throws InvalidArgumentError on a bad expression or zone.
 */
export function nextCronTime(schedule: string, after: number, opts: CronScheduleOptions & { endAt?: number | undefined } = {}): number | undefined {
  const problem = cronScheduleProblem(schedule, opts);
  if (problem) throw new InvalidArgumentError(problem);
  if (opts.timezone !== undefined && !isIanaTimezone(opts.timezone)) throw new InvalidArgumentError(`Unknown time zone "${opts.timezone}"`);
  const it = cronParser.parseExpression(schedule, {
    tz: opts.timezone ?? 'UTC',
    currentDate: new Date(after),
    ...(opts.endAt !== undefined ? { endDate: new Date(opts.endAt) } : {}),
  });
  if (!it.hasNext()) return undefined;
  const next = it.next().getTime();
  return opts.endAt !== undefined && next > opts.endAt ? undefined : next;
}

/** What a cron's schedule carries to each firing: whose cron it is (the store row says the rest). */
export interface CronFiringData {
  tenantId: string;
  cronId: string;
}

export function encodeCronFiringData(d: CronFiringData): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ tenant_id: d.tenantId, cron_id: d.cronId }));
}

export function decodeCronFiringData(data: Uint8Array): CronFiringData {
  const v = JSON.parse(new TextDecoder().decode(data)) as { tenant_id?: unknown; cron_id?: unknown };
  if (typeof v.tenant_id !== 'string' || typeof v.cron_id !== 'string') throw new InvalidArgumentError('A cron firing without tenant_id and cron_id');
  return { tenantId: v.tenant_id, cronId: v.cron_id };
}
