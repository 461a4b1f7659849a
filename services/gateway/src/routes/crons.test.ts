import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { createLogger } from '@agentloop/core';
import { startTestGateway, until, type TestGateway } from '../testing/index.js';

// Crons through the official SDK (`client.crons.*`), on a gateway whose SQLite scheduler ticks every second.
let gw: TestGateway;
let acme: Client;
let globex: Client;
let apiUrl: string;

beforeAll(async () => {
  gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'acme-key:acme,globex-key:globex', CRON_ALLOW_SECONDS: 'true' } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  acme = new Client({ apiUrl, apiKey: 'acme-key' });
  globex = new Client({ apiUrl, apiKey: 'globex-key' });
});
afterAll(async () => gw.close());

const input = (text: string) => ({ messages: [{ role: 'user', content: text }] });
const EVERY_SECOND = '* * * * * *';

describe('crons through @langchain/langgraph-sdk', () => {
  it('a thread cron fires ordinary runs on its thread until it is deleted', async () => {
    const thread = await acme.threads.create();
    const cron = await acme.crons.createForThread(thread.thread_id, 'agent', { schedule: EVERY_SECOND, input: input('tick'), metadata: { job: 'report' } });
    expect(cron).toMatchObject({ thread_id: thread.thread_id, assistant_id: 'agent', schedule: EVERY_SECOND, metadata: { job: 'report' }, enabled: true });
    expect(Date.parse(cron.next_run_date)).toBeGreaterThan(Date.now() - 1_000);
    const runs = await until(
      'two finished runs on the thread',
      () => acme.runs.list(thread.thread_id),
      (rs) => rs.filter((r) => r.status === 'success').length >= 2,
    );
    expect(runs.every((r) => r.metadata?.cron_id === cron.cron_id && r.metadata?.job === 'report')).toBe(true);
    const state = await acme.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.content)).toContain('echo: tick');
    await acme.crons.delete(cron.cron_id);
    expect(await acme.crons.search({ threadId: thread.thread_id })).toEqual([]);
    await expect(acme.crons.delete(cron.cron_id)).rejects.toMatchObject({ status: 404 });
  });

  it('a stateless cron makes a new thread per firing and keeps it with on_run_completed keep', async () => {
    const cron = await acme.crons.create('agent', { schedule: EVERY_SECOND, input: input('solo'), onRunCompleted: 'keep', metadata: { kind: 'stateless' } });
    expect(cron).toMatchObject({ thread_id: null, on_run_completed: 'keep' });
    const threads = await until(
      'two kept threads of the cron',
      async () => {
        const all = await acme.threads.search({ metadata: { stateless: true }, limit: 100 });
        const mine = [];
        for (const t of all) if ((await acme.runs.list(t.thread_id)).some((r) => r.metadata?.cron_id === cron.cron_id && r.status === 'success')) mine.push(t);
        return mine;
      },
      (ts) => ts.length >= 2,
    );
    expect(new Set(threads.map((t) => t.thread_id)).size).toBe(threads.length);
    await acme.crons.delete(cron.cron_id);
  });

  it("a stateless cron deletes each firing's thread once its run ended (on_run_completed default delete)", async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'gateway', level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    await using own = await startTestGateway({ logger, env: { CRON_ALLOW_SECONDS: 'true' } });
    const res = await own.app.inject({ method: 'POST', url: '/runs/crons', payload: { assistant_id: 'agent', schedule: EVERY_SECOND, input: input('gone') } });
    expect(res.json()).toMatchObject({ thread_id: null, on_run_completed: 'delete' });
    const fired = await until(
      'a firing',
      async () => lines.map((l) => JSON.parse(l) as { msg: string; thread_id?: string; tenant?: string }).find((e) => e.msg === 'cron fired a run'),
      (e) => e !== undefined,
    );
    await until(
      "the firing's thread to be deleted",
      () => own.store.getThread(fired!.tenant!, fired!.thread_id!),
      (t) => t === undefined,
    );
    await own.app.inject({ method: 'DELETE', url: `/runs/crons/${res.json().cron_id}` });
  });

  it('a thread cron goes away with its thread', async () => {
    const thread = await acme.threads.create();
    const cron = await acme.crons.createForThread(thread.thread_id, 'agent', { schedule: EVERY_SECOND, input: input('x') });
    await acme.threads.delete(thread.thread_id);
    await until(
      'the cron to be deleted at its next tick',
      () => acme.crons.count({ threadId: thread.thread_id }),
      (n) => n === 0,
    );
    await expect(acme.crons.delete(cron.cron_id)).rejects.toMatchObject({ status: 404 });
  });

  it('updates, searches, counts and selects; disabling stops the schedule', async () => {
    const thread = await acme.threads.create();
    const a = await acme.crons.createForThread(thread.thread_id, 'agent', {
      schedule: '0 9 * * *',
      timezone: 'Europe/Paris',
      input: input('a'),
      metadata: { team: 'red' },
    });
    const b = await acme.crons.create('agent', { schedule: '30 8 * * 1', input: input('b'), metadata: { team: 'blue' }, endTime: '2099-01-01T00:00:00Z' });
    expect(b.end_time).toBe('2099-01-01T00:00:00.000Z');
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(new Date(a.next_run_date))).toBe('09:00');

    const updated = await acme.crons.update(a.cron_id, { schedule: '15 10 * * *', enabled: false, input: input('changed') });
    expect(updated).toMatchObject({ schedule: '15 10 * * *', enabled: false, next_run_date: null, timezone: 'Europe/Paris' });
    expect(updated.payload).toMatchObject({ input: input('changed') });

    expect(await acme.crons.count({ threadId: thread.thread_id })).toBe(1);
    expect(await acme.crons.count({ metadata: { team: 'blue' } })).toBe(1);
    const disabled = await acme.crons.search({ enabled: false });
    expect(disabled.map((c) => c.cron_id)).toContain(a.cron_id);
    expect(disabled.map((c) => c.cron_id)).not.toContain(b.cron_id);
    const selected = await acme.crons.search({ metadata: { team: 'blue' }, select: ['cron_id', 'schedule'] });
    expect(selected).toEqual([{ cron_id: b.cron_id, schedule: '30 8 * * 1' }]);
    const sorted = await acme.crons.search({ sortBy: 'cron_id', sortOrder: 'asc', limit: 100 });
    expect(sorted.map((c) => c.cron_id)).toEqual([...sorted.map((c) => c.cron_id)].sort());
    await acme.crons.delete(a.cron_id);
    await acme.crons.delete(b.cron_id);
  });

  it('another tenant neither sees, changes nor deletes a cron', async () => {
    const cron = await acme.crons.create('agent', { schedule: '0 0 1 1 *', input: input('x'), metadata: { owner: 'acme' } });
    expect(await globex.crons.search({ metadata: { owner: 'acme' } })).toEqual([]);
    expect(await globex.crons.count({ metadata: { owner: 'acme' } })).toBe(0);
    await expect(globex.crons.update(cron.cron_id, { enabled: false })).rejects.toMatchObject({ status: 404 });
    await expect(globex.crons.delete(cron.cron_id)).rejects.toMatchObject({ status: 404 });
    const thread = await acme.threads.create();
    await expect(globex.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 0 1 1 *' })).rejects.toMatchObject({ status: 404 });
    expect((await acme.crons.search({ metadata: { owner: 'acme' } })).map((c) => c.enabled)).toEqual([true]);
    await acme.crons.delete(cron.cron_id);
  });

  it('refuses a bad schedule, time zone or end time with a 422 naming the field', async () => {
    const post = (body: unknown) =>
      fetch(`${apiUrl}/runs/crons`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'acme-key' }, body: JSON.stringify(body) });
    for (const [body, field] of [
      [{ assistant_id: 'agent', schedule: 'every day' }, 'body.schedule'],
      [{ assistant_id: 'agent', schedule: '61 * * * *' }, 'body.schedule'],
      [{ assistant_id: 'agent', schedule: '0 9 * * *', timezone: 'Mars/Olympus' }, 'body.timezone'],
      [{ assistant_id: 'agent', schedule: '0 9 * * *', end_time: 'tomorrow' }, 'body.end_time'],
      [{ schedule: '0 9 * * *' }, 'body.assistant_id'],
    ] as const) {
      const res = await post(body);
      expect(res.status).toBe(422);
      const json = (await res.json()) as { errors: { path: string }[] };
      expect(json.errors.map((e) => e.path)).toContain(field);
    }
  });

  it('accepts the seconds field only when CRON_ALLOW_SECONDS is on', async () => {
    await using strict = await startTestGateway({ orchestrator: false });
    const res = await strict.app.inject({ method: 'POST', url: '/runs/crons', payload: { assistant_id: 'agent', schedule: EVERY_SECOND } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0]).toMatchObject({ path: 'body.schedule' });
    expect(res.json().errors[0].message).toContain('has 6 field(s)');
  });
});
