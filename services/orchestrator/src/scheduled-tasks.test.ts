import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteQueueDatabase, SqliteScheduler } from '@agentloop/queue';
import { createSqliteStore, type Store } from '@agentloop/store';
import { ScheduledTasks } from './scheduled-tasks.js';

let store: Store;
let db: SqliteQueueDatabase;
let scheduler: SqliteScheduler;
let tasks: ScheduledTasks;

beforeEach(async () => {
  store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  db = new SqliteQueueDatabase({ path: ':memory:' });
  scheduler = new SqliteScheduler('crons', { database: db });
  tasks = new ScheduledTasks({ store, scheduler });
});
afterEach(async () => {
  await scheduler.close();
  await db.close();
  await store.close();
});

const call = (name: string, args: Record<string, unknown>, over: { tenantId?: string; threadId?: string } = {}) =>
  tasks.execute({ tenantId: over.tenantId ?? 'acme', threadId: over.threadId ?? 'thread-1', runId: 'run-1', name, args });
const body = (r: { content: string }) => JSON.parse(r.content) as Record<string, unknown>;

describe('scheduled-task tools', () => {
  it('schedule_task with a cron stores a cron on the thread, scheduled in its time zone', async () => {
    const r = await call('schedule_task', { prompt: 'Summarise the news', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
    expect(r.isError).toBe(false);
    const { task_id, next_run } = body(r) as { task_id: string; next_run: string };
    const cron = await store.getCron('acme', task_id);
    expect(cron).toMatchObject({ threadId: 'thread-1', schedule: '0 9 * * 1-5', timezone: 'Europe/Paris', enabled: true });
    expect(cron?.payload).toMatchObject({ input: { messages: [{ role: 'user', content: 'Summarise the news' }] } });
    expect(await scheduler.nextAt(task_id)).toBe(Date.parse(next_run));
  });

  it('schedule_task with `at` runs once at that second and ends there', async () => {
    const at = new Date(Date.now() + 3600_000);
    at.setUTCMilliseconds(0);
    const r = await call('schedule_task', { prompt: 'Remind me', at: at.toISOString() });
    const { task_id, next_run } = body(r) as { task_id: string; next_run: string };
    expect(next_run).toBe(at.toISOString());
    const cron = await store.getCron('acme', task_id);
    expect(cron?.endTime?.getTime()).toBeLessThan(at.getTime() + 1000);
  });

  it('refuses bad arguments with a message naming the problem', async () => {
    const bad = async (args: Record<string, unknown>) => {
      const r = await call('schedule_task', args);
      expect(r.isError).toBe(true);
      return r.content;
    };
    expect(await bad({ prompt: 'x' })).toContain('exactly one of `at`');
    expect(await bad({ prompt: 'x', at: '2030-01-01T00:00:00Z', cron: '* * * * *' })).toContain('exactly one of `at`');
    expect(await bad({ prompt: 'x', at: '2001-01-01T00:00:00Z' })).toContain('in the past');
    expect(await bad({ prompt: 'x', cron: '* * * * * *' })).toContain('5');
    expect(await bad({ prompt: 'x', cron: '0 9 * * *', timezone: 'Nowhere/Land' })).toContain('IANA');
    expect(await bad({ cron: '0 9 * * *' })).toContain('prompt');
    expect(await store.countCrons('acme', {})).toBe(0);
  });

  it('list_tasks and delete_task see only this thread of this tenant', async () => {
    const mine = body(await call('schedule_task', { prompt: 'mine', cron: '0 9 * * *' })).task_id as string;
    const otherThread = body(await call('schedule_task', { prompt: 'theirs', cron: '0 9 * * *' }, { threadId: 'thread-2' })).task_id as string;
    const otherTenant = body(await call('schedule_task', { prompt: 'globex', cron: '0 9 * * *' }, { tenantId: 'globex' })).task_id as string;
    const listed = body(await call('list_tasks', {})).tasks as Array<{ task_id: string; prompt: string }>;
    expect(listed.map((t) => [t.task_id, t.prompt])).toEqual([[mine, 'mine']]);

    for (const id of [otherThread, otherTenant]) {
      const r = await call('delete_task', { task_id: id });
      expect(r.isError).toBe(true);
      expect(r.content).toContain(`no task ${id}`);
    }
    expect(await store.getCron('acme', otherThread)).toBeDefined();
    expect(await store.getCron('globex', otherTenant)).toBeDefined();

    expect(body(await call('delete_task', { task_id: mine }))).toEqual({ ok: true, deleted: mine });
    expect(await store.getCron('acme', mine)).toBeUndefined();
    expect(await scheduler.nextAt(mine)).toBeUndefined();
    expect(body(await call('list_tasks', {})).tasks).toEqual([]);
  });
});
