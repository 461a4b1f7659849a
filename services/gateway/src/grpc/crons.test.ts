import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { failure, startTwoTenantGrpc, type TwoTenantGrpc } from './testing.js';
import { until } from '../testing/index.js';

// Crons over gRPC: the same schemas and CronService as HTTP /runs/crons, on a SQLite scheduler ticking every second.
let t: TwoTenantGrpc;
beforeAll(async () => {
  t = await startTwoTenantGrpc({ env: { CRON_ALLOW_SECONDS: 'true' } });
});
afterAll(async () => t.close());

const say = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }] });
const EVERY_SECOND = '* * * * * *';

describe('crons over gRPC', () => {
  it('a thread cron fires ordinary runs on its thread, is found, updated, counted and deleted', async () => {
    const thread = await t.acme.createThread({});
    const cron = await t.acme.createCron({
      threadId: thread.threadId,
      schedule: EVERY_SECOND,
      inputJson: say('tick'),
      metadataJson: JSON.stringify({ job: 'report' }),
    });
    expect(cron).toMatchObject({ threadId: thread.threadId, assistantId: 'agent', schedule: EVERY_SECOND, enabled: true, onRunCompleted: '' });
    expect(JSON.parse(cron.metadataJson)).toEqual({ job: 'report' });
    expect(JSON.parse(cron.payloadJson)).toMatchObject({ input: { messages: [{ role: 'user', content: 'tick' }] }, assistant_id: 'agent' });
    expect(Date.parse(cron.nextRunDate)).toBeGreaterThan(0);

    const runs = await until(
      'a finished run of the cron',
      () => t.acme.listRuns({ threadId: thread.threadId }),
      (r) => r.runs.some((run) => run.status === 'success'),
    );
    expect(JSON.parse(runs.runs[0]!.metadataJson)).toMatchObject({ cron_id: cron.cronId, job: 'report' });

    const found = await t.acme.searchCrons({ threadId: thread.threadId });
    expect(found.crons.map((c) => c.cronId)).toEqual([cron.cronId]);
    expect((await t.acme.countCrons({ metadataJson: JSON.stringify({ job: 'report' }) })).count).toBe(1n);

    const updated = await t.acme.updateCron({ cronId: cron.cronId, enabled: false, timezone: 'Europe/Paris', endTime: '2099-01-01T00:00:00Z' });
    expect(updated).toMatchObject({ enabled: false, timezone: 'Europe/Paris', nextRunDate: '' });
    expect(Date.parse(updated.endTime)).toBe(Date.parse('2099-01-01T00:00:00Z'));
    expect((await t.acme.countCrons({ enabled: true, threadId: thread.threadId })).count).toBe(0n);
    const cleared = await t.acme.updateCron({ cronId: cron.cronId, timezone: '', endTime: '' });
    expect(cleared).toMatchObject({ timezone: '', endTime: '', enabled: false });

    // The HTTP API sees the same cron.
    const http = await t.gw.app.inject({
      method: 'POST',
      url: '/runs/crons/search',
      headers: { 'x-api-key': 'acme-key' },
      payload: { thread_id: thread.threadId },
    });
    expect(http.json()).toMatchObject([{ cron_id: cron.cronId, enabled: false }]);

    await t.acme.deleteCron({ cronId: cron.cronId });
    expect((await t.acme.searchCrons({ threadId: thread.threadId })).crons).toEqual([]);
    expect((await failure(t.acme.deleteCron({ cronId: cron.cronId }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it('creates a stateless cron (empty thread_id) that deletes its threads by default', async () => {
    const cron = await t.acme.createCron({ schedule: '0 3 * * *', timezone: 'UTC', inputJson: say('nightly') });
    expect(cron).toMatchObject({ threadId: '', onRunCompleted: 'delete', timezone: 'UTC' });
    const kept = await t.acme.createCron({ schedule: '0 4 * * *', onRunCompleted: 'keep', enabled: false });
    expect(kept).toMatchObject({ onRunCompleted: 'keep', enabled: false });
    const page = await t.acme.searchCrons({ sortBy: 'created_at', sortOrder: 'asc', limit: 1, offset: 0, threadId: '' });
    expect(page.crons).toHaveLength(1);
    await t.acme.deleteCron({ cronId: cron.cronId });
    await t.acme.deleteCron({ cronId: kept.cronId });
  });

  it("keeps tenants apart: another tenant's cron and thread are NOT_FOUND and absent from its search", async () => {
    const thread = await t.acme.createThread({});
    const cron = await t.acme.createCron({ threadId: thread.threadId, schedule: '0 0 1 1 *', inputJson: say('private') });
    expect((await failure(t.globex.updateCron({ cronId: cron.cronId, schedule: '0 0 2 1 *' }))).code).toBe(grpc.status.NOT_FOUND);
    expect((await failure(t.globex.deleteCron({ cronId: cron.cronId }))).code).toBe(grpc.status.NOT_FOUND);
    expect((await t.globex.searchCrons({})).crons).toEqual([]);
    expect((await t.globex.countCrons({})).count).toBe(0n);
    const onTheirThread = await failure(t.globex.createCron({ threadId: thread.threadId, schedule: '0 0 1 1 *' }));
    expect(onTheirThread.code).toBe(grpc.status.NOT_FOUND);
    expect((await t.acme.searchCrons({ threadId: thread.threadId })).crons.map((c) => c.schedule)).toEqual(['0 0 1 1 *']);
    await t.acme.deleteCron({ cronId: cron.cronId });
  });

  it('names the invalid field with INVALID_ARGUMENT', async () => {
    const cases: Array<[Promise<unknown>, string]> = [
      [t.acme.createCron({ schedule: 'every day' }), 'schedule'],
      [t.acme.createCron({ schedule: '' }), 'schedule: schedule is required'],
      [t.acme.createCron({ schedule: '0 3 * * *', timezone: 'Mars/Olympus' }), 'timezone'],
      [t.acme.createCron({ schedule: '0 3 * * *', endTime: 'tomorrow' }), 'end_time'],
      [t.acme.createCron({ schedule: '0 3 * * *', inputJson: '{' }), 'input_json: is not valid JSON'],
      [t.acme.createCron({ schedule: '0 3 * * *', metadataJson: '[1]' }), 'metadata_json'],
      [t.acme.createCron({ schedule: '0 3 * * *', multitaskStrategy: 'sometimes' }), 'multitask_strategy'],
      [t.acme.createCron({ schedule: '0 3 * * *', onRunCompleted: 'archive' }), 'on_run_completed'],
      [t.acme.createCron({ threadId: 'not-a-uuid', schedule: '0 3 * * *' }), 'thread_id'],
      [t.acme.updateCron({ cronId: '', schedule: '0 3 * * *' }), 'cron_id'],
      [t.acme.searchCrons({ limit: 5000 }), 'limit'],
      [t.acme.searchCrons({ sortBy: 'color' }), 'sort_by'],
    ];
    for (const [call, field] of cases) {
      const err = await failure(call);
      expect(err.code, field).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details, field).toContain(field);
      expect(err.details, field).not.toContain('body.');
    }
    const onThread = await t.acme.createThread({});
    const err = await failure(t.acme.createCron({ threadId: onThread.threadId, schedule: '0 3 * * *', onRunCompleted: 'keep' }));
    expect(err.details).toContain('on_run_completed');
  });

  it('answers NOT_FOUND for an unknown assistant', async () => {
    const err = await failure(t.acme.createCron({ schedule: '0 3 * * *', assistantId: '00000000-0000-4000-8000-000000000001' }));
    expect(err.code).toBe(grpc.status.NOT_FOUND);
  });
});
