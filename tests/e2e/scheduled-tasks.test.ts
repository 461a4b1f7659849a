/**
 * The scheduled-task tools end to end (issue 12, seed 003), embedded: a scripted run schedules a
 * task with `schedule_task`; the task is a cron visible through the API; it fires, runs on the
 * thread and calls the thread's webhook; `list_tasks` and `delete_task` see and remove tasks; another
 * tenant neither sees nor deletes them.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, startWebhookReceiver, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string; name?: string };
const input = (text: string) => ({ messages: [{ role: 'user', content: text }] });

describe('scheduled-task tools (embedded)', () => {
  const fx = useEmbeddedServer('agentloop-tasks-', {
    ALLOW_SCRIPTED_MODEL: 'true',
    AGENTLOOP_API_KEYS: 'acme-key:acme,globex-key:globex',
    WEBHOOK_ALLOW: '127.0.0.1',
  });
  const acme = () => new Client({ apiUrl: fx.url, apiKey: 'acme-key' });
  const globex = () => new Client({ apiUrl: fx.url, apiKey: 'globex-key' });

  it('a task scheduled with schedule_task fires once, runs on the thread and calls its webhook', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const client = acme();
      const thread = await client.threads.create();
      const at = new Date(Date.now() + 6_000).toISOString();
      const values = (await client.runs.wait(thread.thread_id, 'agent', {
        input: input('remind me in a few seconds'),
        config: scripted([{ tool_calls: [{ name: 'schedule_task', args: { prompt: 'Time for the reminder', at } }] }, { content: 'Scheduled.' }]),
        webhook: receiver.url,
      })) as { messages: Msg[] };
      const toolMsg = values.messages.find((m) => m.type === 'tool' && m.name === 'schedule_task');
      const scheduled = JSON.parse(toolMsg?.content ?? '{}') as { ok: boolean; task_id: string; next_run: string };
      expect(scheduled).toMatchObject({ ok: true, next_run: new Date(at.replace(/\.\d+Z$/, '.000Z')).toISOString() });

      // The task is a cron of this thread, visible through the API; the task's run gets its own script.
      const [cron] = await client.crons.search({ threadId: thread.thread_id });
      expect(cron).toMatchObject({ cron_id: scheduled.task_id, thread_id: thread.thread_id, enabled: true });
      await client.crons.update(scheduled.task_id, { config: scripted([{ content: 'Reminder: done.' }]) });
      expect(await globex().crons.search({ threadId: thread.thread_id })).toEqual([]);

      await receiver.waitFor(2, 60_000);
      const taskRun = receiver.deliveries[1]!.json as { run_id: string; status: string; thread_id: string };
      expect(taskRun).toMatchObject({ status: 'success', thread_id: thread.thread_id });
      const runs = await client.runs.list(thread.thread_id);
      expect(runs.filter((r) => r.metadata?.cron_id === scheduled.task_id).map((r) => r.run_id)).toEqual([taskRun.run_id]);
      const state = await client.threads.getState<{ messages: Msg[] }>(thread.thread_id);
      const texts = state.values.messages.map((m) => m.content);
      expect(texts).toContain('Time for the reminder');
      expect(texts.at(-1)).toBe('Reminder: done.');
      // A one-off task has no next run once it fired.
      expect((await client.crons.search({ threadId: thread.thread_id }))[0]?.next_run_date).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('list_tasks and delete_task see and remove the thread’s tasks; another tenant cannot delete them', async () => {
    const client = acme();
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * 1', input: input('weekly report') });

    // Another tenant's agent, knowing the id, is told there is no such task.
    const other = globex();
    const otherThread = await other.threads.create();
    const refused = (await other.runs.wait(otherThread.thread_id, 'agent', {
      input: input('delete that task'),
      config: scripted([{ tool_calls: [{ name: 'delete_task', args: { task_id: cron.cron_id } }] }, { content: 'Tried.' }]),
    })) as { messages: Msg[] };
    expect(refused.messages.find((m) => m.name === 'delete_task')?.content).toContain(`no task ${cron.cron_id}`);
    expect((await client.crons.search({ threadId: thread.thread_id })).map((c) => c.cron_id)).toEqual([cron.cron_id]);

    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: input('show and delete my tasks'),
      config: scripted([
        { tool_calls: [{ name: 'list_tasks', args: {} }] },
        { tool_calls: [{ name: 'delete_task', args: { task_id: cron.cron_id } }] },
        { tool_calls: [{ name: 'list_tasks', args: {} }] },
        { content: 'Done.' },
      ]),
    })) as { messages: Msg[] };
    const results = values.messages.filter((m) => m.type === 'tool').map((m) => JSON.parse(m.content) as Record<string, unknown>);
    expect(results[0]).toMatchObject({ ok: true, tasks: [{ task_id: cron.cron_id, prompt: 'weekly report', schedule: '0 9 * * 1', timezone: 'UTC' }] });
    expect(results[1]).toEqual({ ok: true, deleted: cron.cron_id });
    expect(results[2]).toEqual({ ok: true, tasks: [] });
    expect(await client.crons.search({ threadId: thread.thread_id })).toEqual([]);
    expect(await client.crons.count({ threadId: thread.thread_id })).toBe(0);
  });
});
