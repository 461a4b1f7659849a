/**
 * The run lifecycle over a real database (SQLite file / MariaDB): admission decided by the
 * database with several clients racing, durable deferral and promotion, cancels, recovery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunLifecycle, runJobId, type LifecycleEvent, type RunJobSink } from '../run-lifecycle.js';
import type { Store } from '../types.js';
import type { StoreTestDatabase, StoreTestHarness } from './contract.js';

let counter = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** A job sink that records what was enqueued, once per job id (like the queues). */
function recordingSink(opts: { fail?: boolean } = {}) {
  const jobs = new Map<string, Uint8Array>();
  const order: string[] = [];
  /** The fairness group of each job (its run's tenant, docs/adr/0008-fair-scheduling.md). */
  const groups = new Map<string, string | undefined>();
  const sink: RunJobSink = {
    async enqueue(payload, o) {
      if (opts.fail) throw new Error('queue down');
      if (jobs.has(o.jobId)) return { added: false };
      jobs.set(o.jobId, payload);
      groups.set(o.jobId, o.group);
      order.push(o.jobId);
      return { added: true };
    },
    async getState(jobId) {
      return jobs.has(jobId) ? 'waiting' : 'unknown';
    },
  };
  return { sink, jobs, order, groups };
}

const payloadOf = (s: string) => new TextEncoder().encode(s);

export function lifecycleContract(harness: StoreTestHarness): void {
  describe(`RunLifecycle (${harness.name})`, () => {
    let database: StoreTestDatabase;
    let a: Store;
    let b: Store;

    beforeAll(async () => {
      database = await harness.newDatabase();
      a = database.open();
      await a.migrate();
      b = database.open();
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    const thread = async (store: Store, tenantId = uid('tenant')) => {
      const t = await store.createThread({ tenantId, threadId: uid('thread') });
      return { tenantId, threadId: t.threadId };
    };
    const runOf = (tenantId: string, threadId: string, runId = uid('run')) => ({ runId, threadId, tenantId, assistantId: 'agent' });

    it('two clients racing admissions on one thread: the database admits exactly one, the rest are refused or deferred', async () => {
      const la = new RunLifecycle(a);
      const lb = new RunLifecycle(b);
      for (const whenBusy of ['reject', 'defer'] as const) {
        const { tenantId, threadId } = await thread(a);
        const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? lb : la).admit({ run: runOf(tenantId, threadId), whenBusy })));
        const kinds = results.map((r) => r.kind);
        expect(kinds.filter((k) => k === 'admitted')).toHaveLength(1);
        expect(kinds.filter((k) => k === (whenBusy === 'reject' ? 'busy' : 'deferred'))).toHaveLength(11);
        const admitted = results.find((r) => r.kind === 'admitted');
        const t = await a.getThread(tenantId, threadId);
        expect(t).toMatchObject({ status: 'busy', activeRunId: admitted?.kind === 'admitted' ? admitted.run.runId : 'x' });
        expect(await a.countActiveRuns(tenantId)).toBe(whenBusy === 'reject' ? 1 : 12);
      }
    });

    it('ending the holder hands the thread to the oldest deferred run and enqueues its stored job, once', async () => {
      const { sink, order, groups } = recordingSink();
      const la = new RunLifecycle(a, { jobs: sink });
      const lb = new RunLifecycle(b, { jobs: sink });
      const events: LifecycleEvent<unknown>[] = [];
      la.on('run.ended', (e) => void events.push(e));
      la.on('run.promoted', (e) => void events.push(e));
      const { tenantId, threadId } = await thread(a);
      const ids = [uid('r0'), uid('r1'), uid('r2')];
      const admitted = [];
      for (const id of ids)
        admitted.push(await la.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'defer', job: () => ({ payload: payloadOf(id), attempts: 3 }) }));
      expect(admitted.map((r) => r.kind)).toEqual(['admitted', 'deferred', 'deferred']);
      expect(order).toEqual([ids[0]]);
      // A worker of another process starts the first; a deferred run is not startable.
      const r1 = await a.getRun(tenantId, ids[1]!);
      expect(await lb.start(r1!)).toMatchObject({ kind: 'deferred' });
      const started = await lb.start((await a.getRun(tenantId, ids[0]!))!);
      expect(started.kind).toBe('started');

      const end0 = await la.end({ tenantId, runId: ids[0]!, status: 'success', values: { n: 0 }, cause: 'finished' }, { note: 'ctx' });
      expect(end0).toMatchObject({ kind: 'ended', threadStatus: 'busy', promoted: { runId: ids[1], deferred: false } });
      expect(order).toEqual([ids[0], ids[1]]);
      // Admitted and promoted jobs are enqueued with their tenant as fairness group.
      expect([groups.get(ids[0]!), groups.get(ids[1]!)]).toEqual([tenantId, tenantId]);
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'busy', activeRunId: ids[1], values: { n: 0 } });
      expect(events.map((e) => e.type)).toEqual(['run.ended', 'run.promoted']);
      expect(events[0]).toMatchObject({ cause: 'finished', ctx: { note: 'ctx' }, values: { n: 0 } });

      // Ended twice (a cancel racing the end): the second changes nothing and enqueues nothing.
      expect(await lb.cancel(tenantId, ids[0]!)).toMatchObject({ kind: 'already_ended', run: { status: 'success' } });
      // A cancel of the promoted holder promotes the last one; ending that frees the thread.
      expect(await lb.cancel(tenantId, ids[1]!)).toMatchObject({ kind: 'ended', promoted: { runId: ids[2] } });
      expect(await la.end({ tenantId, runId: ids[2]!, status: 'success', waitsForHuman: true, cause: 'finished' })).toMatchObject({
        kind: 'ended',
        threadStatus: 'interrupted',
        promoted: undefined,
      });
      expect(order).toEqual(ids);
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'interrupted', activeRunId: null });
      expect((await a.listRuns(tenantId, threadId)).map((r) => r.status).sort()).toEqual(['interrupted', 'success', 'success']);
    });

    it('a cancelled deferred run is skipped: it never holds the thread and its job is never enqueued', async () => {
      const { sink, order } = recordingSink();
      const l = new RunLifecycle(a, { jobs: sink });
      const { tenantId, threadId } = await thread(a);
      const [h, d1, d2] = [uid('h'), uid('d1'), uid('d2')];
      for (const id of [h, d1, d2]) await l.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'defer', job: () => ({ payload: payloadOf(id) }) });
      expect(await l.cancel(tenantId, d1)).toMatchObject({ kind: 'ended', threadStatus: undefined, promoted: undefined });
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ activeRunId: h });
      expect(await l.end({ tenantId, runId: h, status: 'error', error: { error: 'Error', message: 'x' }, cause: 'finished' })).toMatchObject({
        promoted: { runId: d2 },
      });
      expect(order).toEqual([h, d2]);
    });

    it('ends racing on one thread (its holder finishing, deferred runs cancelled, from two clients) leave it to the one run still waiting', async () => {
      // MySQL's end is one packet whose statements decide among themselves (run-lifecycle.ts,
      // endMysql): whichever order the ends commit in, no ended run may hold the thread, and the
      // only run left waiting takes it.
      const { sink, order } = recordingSink();
      const la = new RunLifecycle(a, { jobs: sink });
      const lb = new RunLifecycle(b, { jobs: sink });
      for (let round = 0; round < 4; round++) {
        const { tenantId, threadId } = await thread(a);
        const ids = Array.from({ length: 6 }, (_, i) => uid(`r${i}`));
        for (const id of ids) await la.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'defer', job: () => ({ payload: payloadOf(id) }) });
        const [holder, ...deferred] = ids;
        const last = deferred.pop()!;
        const ends = await Promise.all([
          (round % 2 ? lb : la).end({ tenantId, runId: holder!, status: 'success', values: { round }, cause: 'finished' }),
          ...deferred.map((id, i) => (i % 2 ? la : lb).cancel(tenantId, id)),
        ]);
        expect(ends.map((e) => e.kind)).toEqual(ids.slice(0, -1).map(() => 'ended'));
        expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'busy', activeRunId: last, values: { round } });
        expect(await a.getRun(tenantId, last)).toMatchObject({ status: 'pending', deferred: false });
        for (const id of deferred) expect(await a.getRun(tenantId, id)).toMatchObject({ status: 'interrupted', deferred: false });
        expect(order).toContain(last);
        // The last one ends: the thread is free with the status its end leaves.
        expect(await lb.end({ tenantId, runId: last, status: 'error', cause: 'finished' })).toMatchObject({
          kind: 'ended',
          threadStatus: 'error',
          promoted: undefined,
        });
        expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'error', activeRunId: null });
      }
    });

    it("a run's end after a cancel ended it: its values land on its thread when free, not on a thread another run holds", async () => {
      const l = new RunLifecycle(a);
      const free = await thread(a);
      const h = uid('h');
      await l.admit({ run: runOf(free.tenantId, free.threadId, h), whenBusy: 'reject' });
      expect(await l.cancel(free.tenantId, h)).toMatchObject({ kind: 'ended', threadStatus: 'idle' });
      expect(await l.end({ tenantId: free.tenantId, runId: h, status: 'success', values: { stopped: 1, note: 'ümlaut 😀' }, cause: 'finished' })).toMatchObject(
        {
          kind: 'already_ended',
          run: { runId: h, status: 'interrupted' },
        },
      );
      expect(await a.getThread(free.tenantId, free.threadId)).toMatchObject({ status: 'idle', activeRunId: null, values: { stopped: 1, note: 'ümlaut 😀' } });

      const held = await thread(a);
      const [h2, d] = [uid('h2'), uid('d')];
      for (const id of [h2, d]) await l.admit({ run: runOf(held.tenantId, held.threadId, id), whenBusy: 'defer' });
      expect(await l.cancel(held.tenantId, h2)).toMatchObject({ kind: 'ended', promoted: { runId: d } });
      expect(await l.end({ tenantId: held.tenantId, runId: h2, status: 'success', values: { stopped: 2 }, cause: 'finished' })).toMatchObject({
        kind: 'already_ended',
      });
      expect(await a.getThread(held.tenantId, held.threadId)).toMatchObject({ status: 'busy', activeRunId: d, values: null });
      expect(await l.end({ tenantId: held.tenantId, runId: uid('none'), status: 'success', cause: 'finished' })).toEqual({ kind: 'missing' });
    });

    it('a job lost between a commit and its enqueue is enqueued by recoverPending, once', async () => {
      const { tenantId, threadId } = await thread(a);
      const crashed = new RunLifecycle(a); // no queue: as if the process died right after each commit
      const [h, d] = [uid('h'), uid('d')];
      for (const id of [h, d])
        await crashed.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'defer', job: () => ({ payload: payloadOf(id), delayMs: 0 }) });
      const { sink, jobs } = recordingSink();
      const sweeper = new RunLifecycle(b, { jobs: sink });
      // (Other tests' runs share the database: only this test's runs are looked at.)
      const recover = async () => (await sweeper.recoverPending(new Date(Date.now() + 60_000), 1000)).filter((id) => id === h || id === d);
      expect(await recover()).toEqual([h]);
      expect(new TextDecoder().decode(jobs.get(h))).toBe(h);
      await crashed.end({ tenantId, runId: h, status: 'success', cause: 'finished' });
      expect(await recover()).toEqual([d]);
      expect(await recover()).toEqual([]);
      expect([...jobs.keys()].filter((id) => id === h || id === d)).toEqual([h, d]);
    });

    it('a deferred run whose thread no run holds takes it through recoverPending', async () => {
      const { tenantId, threadId } = await thread(a);
      const l = new RunLifecycle(a);
      const [h, d] = [uid('h'), uid('d')];
      await l.admit({ run: runOf(tenantId, threadId, h), whenBusy: 'defer' });
      await l.admit({ run: runOf(tenantId, threadId, d), whenBusy: 'defer', job: () => ({ payload: payloadOf(d) }) });
      // The holder is deleted with no end transition (e.g. records restored from an old backup).
      await a.writeTransaction((db) =>
        db.updateTable('threads').set({ active_run_id: null }).where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute(),
      );
      const { sink } = recordingSink();
      expect(await new RunLifecycle(b, { jobs: sink }).recoverPending(new Date(Date.now() + 60_000), 1000)).toContain(d);
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ activeRunId: d, status: 'busy' });
      expect(await a.getRun(tenantId, d)).toMatchObject({ deferred: false, status: 'pending' });
    });

    it('a run whose job cannot be enqueued ends as error, releases its thread, and admission throws UNAVAILABLE', async () => {
      const { tenantId, threadId } = await thread(a);
      const { sink } = recordingSink({ fail: true });
      const l = new RunLifecycle(a, { jobs: sink });
      const id = uid('r');
      await expect(l.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'reject', job: () => ({ payload: payloadOf(id) }) })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
      });
      expect(await a.getRun(tenantId, id)).toMatchObject({ status: 'error' });
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ activeRunId: null, status: 'error' });
    });

    it('deadLetter ends a running run as error with the reason, releases its thread, emits run.ended; it is listed; a second call changes nothing', async () => {
      const { sink } = recordingSink();
      const l = new RunLifecycle(a, { jobs: sink });
      const ended: LifecycleEvent<unknown>[] = [];
      l.on('run.ended', (e) => void ended.push(e));
      const tenantId = uid('tenant');
      const { threadId } = await thread(a, tenantId);
      const id = uid('poison');
      await l.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'reject', job: () => ({ payload: payloadOf(id), attempts: 3 }) });
      await l.start((await a.getRun(tenantId, id))!);
      const res = await l.deadLetter({ tenantId, runId: id, reason: 'its worker died 3 times' }, { job: 'ctx' });
      expect(res).toMatchObject({ kind: 'ended', threadStatus: 'error', run: { status: 'error', deadLetter: { reason: 'its worker died 3 times' } } });
      expect(ended).toHaveLength(1);
      expect(ended[0]).toMatchObject({
        type: 'run.ended',
        cause: 'dead_lettered',
        ctx: { job: 'ctx' },
        error: { error: 'DeadLetterError', message: expect.stringContaining('its worker died 3 times') },
      });
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'error', activeRunId: null });
      const run = await a.getRun(tenantId, id);
      expect(run).toMatchObject({ status: 'error', error: expect.stringContaining('dead-lettered'), redrives: 0 });
      expect(run?.deadLetter?.at).toBeInstanceOf(Date);
      expect((await l.listDeadLettered(tenantId, { limit: 10, offset: 0 })).map((r) => r.runId)).toEqual([id]);
      expect(await new RunLifecycle(b).listDeadLettered(uid('other-tenant'), { limit: 10, offset: 0 })).toEqual([]);
      expect(await l.deadLetter({ tenantId, runId: id, reason: 'again' })).toMatchObject({ kind: 'already_ended' });
      expect(ended).toHaveLength(1);
      // A run that ended normally is never dead-lettered.
      const ok = uid('ok');
      await l.admit({ run: runOf(tenantId, threadId, ok), whenBusy: 'reject' });
      await l.end({ tenantId, runId: ok, status: 'success', cause: 'finished' });
      expect(await l.deadLetter({ tenantId, runId: ok, reason: 'x' })).toMatchObject({ kind: 'already_ended', run: { status: 'success', deadLetter: null } });
    });

    it('deadLetter keeps the job the queue had when the run stores none (a delegated run admitted without one); paginated list, newest first', async () => {
      const l = new RunLifecycle(a);
      const tenantId = uid('tenant');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { threadId } = await thread(a, tenantId);
        const id = uid(`dl${i}`);
        ids.push(id);
        await l.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'reject' });
        await l.deadLetter({ tenantId, runId: id, reason: `r${i}`, job: { payload: payloadOf(`job-${i}`), attempts: 2 } });
        await new Promise((r) => setTimeout(r, 3));
      }
      expect(new TextDecoder().decode((await l.storedJob(tenantId, ids[0]!))?.payload)).toBe('job-0');
      expect((await l.listDeadLettered(tenantId, { limit: 2, offset: 0 })).map((r) => r.runId)).toEqual([ids[2], ids[1]]);
      expect((await l.listDeadLettered(tenantId, { limit: 2, offset: 2 })).map((r) => r.runId)).toEqual([ids[0]]);
      // A job stored at admission is not replaced.
      const { threadId } = await thread(a, tenantId);
      const own = uid('own');
      await l.admit({ run: runOf(tenantId, threadId, own), whenBusy: 'reject', job: () => ({ payload: payloadOf('admitted') }), callerEnqueues: true });
      await l.deadLetter({ tenantId, runId: own, reason: 'x', job: { payload: payloadOf('from-queue') } });
      expect(new TextDecoder().decode((await l.storedJob(tenantId, own))?.payload)).toBe('admitted');
    });

    it('admission with callerEnqueues stores the job but does not enqueue it', async () => {
      const { sink, order } = recordingSink();
      const l = new RunLifecycle(a, { jobs: sink });
      const { tenantId, threadId } = await thread(a);
      const id = uid('child');
      expect(
        await l.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'reject', job: () => ({ payload: payloadOf(id) }), callerEnqueues: true }),
      ).toMatchObject({ kind: 'admitted' });
      expect(order).not.toContain(id);
      expect(new TextDecoder().decode((await l.storedJob(tenantId, id))?.payload)).toBe(id);
    });

    it('redrive: only a dead-lettered run, only when its thread is free; pending again with a new job id, once, across two clients', async () => {
      const { sink, jobs } = recordingSink();
      const la = new RunLifecycle(a, { jobs: sink });
      const lb = new RunLifecycle(b, { jobs: sink });
      const redriven: LifecycleEvent<unknown>[] = [];
      la.on('run.redriven', (e) => void redriven.push(e));
      lb.on('run.redriven', (e) => void redriven.push(e));
      const { tenantId, threadId } = await thread(a);
      const id = uid('poison');
      await la.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'reject', job: () => ({ payload: payloadOf(id), attempts: 3 }) });
      // Not dead-lettered: refused while running, and after a normal error.
      expect(await la.redrive(tenantId, id)).toMatchObject({ kind: 'not_dead_lettered' });
      await la.start((await a.getRun(tenantId, id))!);
      expect(await la.redrive(tenantId, id)).toMatchObject({ kind: 'not_dead_lettered', run: { status: 'running' } });
      await la.deadLetter({ tenantId, runId: id, reason: 'poison' });
      // Another run took the thread meanwhile: refused until it ends.
      const other = uid('other');
      await la.admit({ run: runOf(tenantId, threadId, other), whenBusy: 'reject' });
      expect(await la.redrive(tenantId, id)).toMatchObject({ kind: 'thread_busy', holder: other });
      await la.end({ tenantId, runId: other, status: 'success', cause: 'finished' });
      // Two clients race: exactly one re-drives it.
      const results = await Promise.all([la.redrive(tenantId, id), lb.redrive(tenantId, id)]);
      expect(results.map((r) => r.kind).sort()).toEqual(['not_dead_lettered', 'redriven']);
      const won = results.find((r) => r.kind === 'redriven');
      expect(won).toMatchObject({ jobId: `${id}-redrive-1`, run: { status: 'pending', deadLetter: null, redrives: 1 } });
      expect(redriven).toHaveLength(1);
      expect(new TextDecoder().decode(jobs.get(`${id}-redrive-1`))).toBe(id);
      const run = (await a.getRun(tenantId, id))!;
      expect(run).toMatchObject({ status: 'pending', error: null, endedAt: null, deadLetter: null, redrives: 1 });
      expect(runJobId(run)).toBe(`${id}-redrive-1`);
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'busy', activeRunId: id });
      expect((await la.listDeadLettered(tenantId, { limit: 10, offset: 0 })).map((r) => r.runId)).not.toContain(id);
      // It runs again (attempts keep counting: the executor resumes from its checkpoint) and ends.
      expect(await la.start(run)).toMatchObject({ kind: 'started', run: { attempts: 2 } });
      expect(await la.end({ tenantId, runId: id, status: 'success', cause: 'finished' })).toMatchObject({ kind: 'ended', threadStatus: 'idle' });
      expect(await la.redrive(tenantId, id)).toMatchObject({ kind: 'not_dead_lettered' });
      expect(await la.redrive(tenantId, uid('missing'))).toMatchObject({ kind: 'missing' });
    });

    it('a re-driven run whose new job was lost is enqueued by recoverPending under its new job id', async () => {
      const l = new RunLifecycle(a, { jobs: recordingSink().sink });
      const { tenantId, threadId } = await thread(a);
      const id = uid('poison');
      await l.admit({ run: runOf(tenantId, threadId, id), whenBusy: 'reject', job: () => ({ payload: payloadOf(id) }) });
      await l.deadLetter({ tenantId, runId: id, reason: 'poison' });
      await new RunLifecycle(a).redrive(tenantId, id); // no queue: as if the process died after the commit
      const { sink, jobs } = recordingSink();
      expect(await new RunLifecycle(b, { jobs: sink }).recoverPending(new Date(Date.now() + 60_000), 1000)).toContain(id);
      expect(jobs.has(`${id}-redrive-1`)).toBe(true);
    });

    it("admission claims the thread's pending uploads in its transaction; a refused admission claims none", async () => {
      const { tenantId, threadId } = await thread(a);
      await a.addUpload({
        tenantId,
        threadId,
        uploadId: 'u1',
        path: 'uploads/a.txt',
        name: 'a.txt',
        originalName: 'a.txt',
        type: 'text',
        mime: 'text/plain',
        size: 1,
        mismatch: null,
      });
      const l = new RunLifecycle(a);
      const first = await l.admit({ run: runOf(tenantId, threadId), whenBusy: 'reject' });
      // The uploads the job was last built from: the run's job (`AdmitRequest.job` may be called
      // more than once, MySQL trying an admission without uploads first).
      const seen: string[][] = [];
      const busy = await l.admit({
        run: runOf(tenantId, threadId),
        whenBusy: 'reject',
        claimUploads: true,
        job: (u) => (seen.push(u.map((x) => x.uploadId)), { payload: payloadOf('x') }),
      });
      expect(busy.kind).toBe('busy');
      expect(seen.filter((ids) => ids.length > 0)).toEqual([]);
      seen.length = 0;
      expect((await a.listUploads(tenantId, threadId))[0]?.runId).toBeNull();
      await l.end({ tenantId, runId: first.kind === 'admitted' ? first.run.runId : '', status: 'success', cause: 'finished' });
      const second = await l.admit({
        run: runOf(tenantId, threadId),
        whenBusy: 'reject',
        claimUploads: true,
        job: (u) => (seen.push(u.map((x) => x.uploadId)), { payload: payloadOf('x') }),
      });
      expect(second.kind).toBe('admitted');
      expect(seen.at(-1)).toEqual(['u1']);
      expect((await a.listUploads(tenantId, threadId))[0]?.runId).toBe(second.kind === 'admitted' ? second.run.runId : '');
    });
    it('getRunWithThreadValues reads the run and the values its end left on the thread, tenant-scoped', async () => {
      const { tenantId, threadId } = await thread(a);
      const l = new RunLifecycle(a);
      const admitted = await l.admit({ run: runOf(tenantId, threadId), whenBusy: 'reject' });
      if (admitted.kind !== 'admitted') throw new Error(admitted.kind);
      const { runId } = admitted.run;
      expect(await a.getRunWithThreadValues(tenantId, runId)).toMatchObject({ run: { runId, status: 'pending', threadId }, threadValues: null });
      await l.end({ tenantId, runId, status: 'success', cause: 'finished', values: { answer: 42 } });
      expect(await a.getRunWithThreadValues(tenantId, runId)).toEqual({ run: await a.getRun(tenantId, runId), threadValues: { answer: 42 } });
      expect(await a.getRunWithThreadValues(uid('tenant'), runId)).toBeUndefined();
      expect(await a.getRunWithThreadValues(tenantId, 'no-such-run')).toBeUndefined();
    });

    it("admission hands the job every pending upload it claimed, in the thread's upload order", async () => {
      const { tenantId, threadId } = await thread(a);
      for (const id of ['u3', 'u1', 'u4', 'u2']) {
        await a.addUpload({
          tenantId,
          threadId,
          uploadId: id,
          path: `uploads/${id}`,
          name: id,
          originalName: id,
          type: 'text',
          mime: 'text/plain',
          size: 1,
          mismatch: null,
        });
      }
      const seen: string[][] = [];
      const admitted = await new RunLifecycle(a).admit({
        run: runOf(tenantId, threadId),
        whenBusy: 'reject',
        claimUploads: true,
        job: (u) => (seen.push(u.map((x) => x.uploadId)), { payload: payloadOf('x') }),
      });
      expect(admitted.kind).toBe('admitted');
      // The last call is the run's job (an earlier one, MySQL's try without uploads, is discarded).
      expect(seen.at(-1)).toEqual((await a.listUploads(tenantId, threadId)).map((u) => u.uploadId));
      expect(seen.at(-1)?.slice().sort()).toEqual(['u1', 'u2', 'u3', 'u4']);
    });
    it('deleteRun removes an ended run only (active: refused), tenant-scoped; restoreThread only while no run holds the thread', async () => {
      const l = new RunLifecycle(a);
      const { tenantId, threadId } = await thread(a);
      const first = await l.admit({ run: runOf(tenantId, threadId), whenBusy: 'reject' });
      if (first.kind !== 'admitted') throw new Error(first.kind);
      const runId = first.run.runId;
      expect(await l.deleteRun(tenantId, runId)).toMatchObject({ kind: 'active', run: { status: 'pending' } });
      expect(await l.restoreThread(tenantId, threadId, { status: 'idle', values: { messages: [] } })).toBe(false);
      expect(await a.listTenantRunsInStatus(tenantId, ['pending', 'running'], 10)).toMatchObject([{ runId }]);
      expect(await a.listTenantRunsInStatus(uid('tenant'), ['pending', 'running'], 10)).toEqual([]);
      await l.end({ tenantId, runId, status: 'success', values: { messages: ['after'] }, cause: 'finished' });
      expect(await l.deleteRun(uid('tenant'), runId)).toEqual({ kind: 'missing' });
      expect(await l.deleteRun(tenantId, runId)).toMatchObject({ kind: 'deleted', run: { runId, status: 'success' } });
      expect(await a.getRun(tenantId, runId)).toBeUndefined();
      expect(await l.deleteRun(tenantId, runId)).toEqual({ kind: 'missing' });
      // A worker finishing a deleted run finds no record and leaves the thread alone.
      expect(await l.end({ tenantId, runId, status: 'success', values: { messages: ['late'] }, cause: 'finished' })).toEqual({ kind: 'missing' });
      expect(await l.restoreThread(tenantId, threadId, { status: 'interrupted', values: { messages: ['before'] } })).toBe(true);
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'interrupted', values: { messages: ['before'] }, activeRunId: null });
      expect(await l.restoreThread(tenantId, threadId, { status: 'idle', values: null })).toBe(true);
      expect(await a.getThread(tenantId, threadId)).toMatchObject({ status: 'idle', values: null });
    });
  });
}
