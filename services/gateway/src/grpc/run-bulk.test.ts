import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { latch, type TestGatewayOptions } from '../testing/index.js';
import { failure, startTwoTenantGrpc, type TwoTenantGrpc } from './testing.js';

// CancelRuns (the SDK's runs.cancelMany) and DeleteRun over gRPC, on the same code as HTTP.
let t: TwoTenantGrpc | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(opts: TestGatewayOptions = {}): Promise<TwoTenantGrpc> {
  t = await startTwoTenantGrpc(opts);
  return t;
}

const say = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }] });

describe('CancelRuns', () => {
  it('cancels the listed runs of a thread; the one left out runs', async () => {
    const held = latch();
    const { acme } = await start({ orchestrator: { gate: () => held.wait() } });
    const thread = await acme.createThread({});
    const a = await acme.createRun({ threadId: thread.threadId, inputJson: say('a') });
    const b = await acme.createRun({ threadId: thread.threadId, inputJson: say('b'), multitaskStrategy: 'enqueue' });
    const c = await acme.createRun({ threadId: thread.threadId, inputJson: say('c'), multitaskStrategy: 'enqueue' });
    const res = await acme.cancelRuns({ threadId: thread.threadId, runIds: [a.runId, b.runId] });
    expect(res.cancelled).toBe(2);
    expect((await acme.getRun({ threadId: thread.threadId, runId: a.runId })).status).toBe('interrupted');
    expect((await acme.getRun({ threadId: thread.threadId, runId: b.runId })).status).toBe('interrupted');
    held.open();
    const joined: string[] = [];
    for await (const ev of acme.joinRunStream({ threadId: thread.threadId, runId: c.runId })) joined.push(ev.event);
    expect(joined.at(-1)).toBe('end');
    expect((await acme.getRun({ threadId: thread.threadId, runId: c.runId })).status).toBe('success');
  });

  it("cancels the tenant's pending runs by status and no other tenant's; another tenant's run id is NOT_FOUND", async () => {
    const { acme, globex } = await start({ orchestrator: false });
    const mine = await acme.createThread({});
    const run = await acme.createRun({ threadId: mine.threadId, inputJson: say('1') });
    const other = await globex.createThread({});
    const theirs = await globex.createRun({ threadId: other.threadId, inputJson: say('theirs') });
    const stolen = await failure(acme.cancelRuns({ threadId: mine.threadId, runIds: [run.runId, theirs.runId] }));
    expect(stolen.code).toBe(grpc.status.NOT_FOUND);
    expect((await acme.getRun({ threadId: mine.threadId, runId: run.runId })).status).toBe('pending');
    expect((await acme.cancelRuns({ status: 'pending' })).cancelled).toBe(1);
    expect((await acme.getRun({ threadId: mine.threadId, runId: run.runId })).status).toBe('interrupted');
    expect((await globex.getRun({ threadId: other.threadId, runId: theirs.runId })).status).toBe('pending');
  });

  it('names the missing or conflicting selection and a bad action with INVALID_ARGUMENT', async () => {
    const { acme } = await start({ orchestrator: false });
    const none = await failure(acme.cancelRuns({}));
    expect(none.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(none.details).toContain('thread_id: give thread_id with run_ids, or a status');
    const both = await failure(
      acme.cancelRuns({ status: 'all', threadId: '6f1d0c3e-8a52-4b7e-9f0a-2c3d4e5f6a7b', runIds: ['6f1d0c3e-8a52-4b7e-9f0a-2c3d4e5f6a7c'] }),
    );
    expect(both.details).toContain('status: give either status');
    const action = await failure(acme.cancelRuns({ status: 'all', action: 'explode' }));
    expect(action.details).toContain('action');
    const ids = await failure(acme.cancelRuns({ threadId: '6f1d0c3e-8a52-4b7e-9f0a-2c3d4e5f6a7b', runIds: ['x'] }));
    expect(ids.details).toContain('run_ids.0');
  });
});

describe('DeleteRun', () => {
  it("deletes a finished run; another tenant's is NOT_FOUND; a running one is FAILED_PRECONDITION", async () => {
    const held = latch();
    const { acme, globex } = await start({ orchestrator: { gate: () => held.wait() } });
    const thread = await acme.createThread({});
    const run = await acme.createRun({ threadId: thread.threadId, inputJson: say('to delete') });
    const busy = await failure(acme.deleteRun({ threadId: thread.threadId, runId: run.runId }));
    expect(busy.code).toBe(grpc.status.FAILED_PRECONDITION);
    held.open();
    for await (const _ of acme.joinRunStream({ threadId: thread.threadId, runId: run.runId })) void _;
    expect((await failure(globex.deleteRun({ threadId: thread.threadId, runId: run.runId }))).code).toBe(grpc.status.NOT_FOUND);
    await acme.deleteRun({ threadId: thread.threadId, runId: run.runId });
    expect((await failure(acme.getRun({ threadId: thread.threadId, runId: run.runId }))).code).toBe(grpc.status.NOT_FOUND);
    expect((await acme.listRuns({ threadId: thread.threadId })).runs).toEqual([]);
    const bad = await failure(acme.deleteRun({ threadId: thread.threadId, runId: 'nope' }));
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).toContain('run_id');
  });
});
