/**
 * The statements saved per run on the admission and the start (issue 9), whose results must not
 * change: `RunLifecycle.take` (the start of a run the worker has not read) and the admission's
 * claim of uploads, skipped when the take says that the thread has none waiting (SQLite) or made
 * by the take itself (MySQL).
 */
import { describe, expect, it } from 'vitest';
import { RunLifecycle } from '../run-lifecycle.js';
import type { Store, UploadRecord } from '../types.js';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

const upload = (tenantId: string, threadId: string, uploadId: string) => ({
  tenantId,
  threadId,
  uploadId,
  path: `uploads/${uploadId}`,
  name: uploadId,
  originalName: uploadId,
  type: 'text' as const,
  mime: 'text/plain',
  size: 1,
  mismatch: null,
});

export function takeContract(harness: StoreTestHarness): void {
  describe(`RunLifecycle take and upload claims (${harness.name})`, () => {
    const store = useMigratedStore(harness);
    const setup = async (s: Store) => {
      const tenantId = uid('tenant');
      const { threadId } = await s.createThread({ tenantId, threadId: uid('thread') });
      return { tenantId, threadId, runOf: () => ({ runId: uid('run'), threadId, tenantId, assistantId: 'agent' }) };
    };

    it('take starts a pending run and returns its record; again it counts an attempt and keeps the first start', async () => {
      const s = store();
      const l = new RunLifecycle(s);
      const started: string[] = [];
      l.on('run.started', (e) => void started.push(e.run.runId));
      const { tenantId, runOf } = await setup(s);
      const admitted = await l.admit({ run: { ...runOf(), kwargs: { input: { n: 1 } } }, whenBusy: 'reject' });
      if (admitted.kind !== 'admitted') throw new Error(admitted.kind);
      const { runId } = admitted.run;
      const first = await l.take(tenantId, runId);
      if (first.kind !== 'started') throw new Error(first.kind);
      expect(first.run).toEqual(await s.getRun(tenantId, runId));
      expect(first.run).toMatchObject({ status: 'running', attempts: 1, kwargs: { input: { n: 1 } }, deferred: false });
      expect(first.run.startedAt).not.toBeNull();
      const again = await l.take(tenantId, runId);
      expect(again).toMatchObject({ kind: 'started', run: { attempts: 2 } });
      expect(again.kind === 'started' && again.run.startedAt?.getTime()).toBe(first.run.startedAt?.getTime());
      expect(started).toEqual([runId, runId]);
    });

    it('take says why it started nothing: missing (or another tenant), deferred, ended', async () => {
      const s = store();
      const l = new RunLifecycle(s);
      const { tenantId, runOf } = await setup(s);
      const holder = await l.admit({ run: runOf(), whenBusy: 'reject' });
      const waiting = await l.admit({ run: runOf(), whenBusy: 'defer' });
      if (holder.kind !== 'admitted' || waiting.kind !== 'deferred') throw new Error(`${holder.kind} ${waiting.kind}`);
      expect(await l.take(tenantId, 'no-such-run')).toEqual({ kind: 'missing' });
      expect(await l.take(uid('tenant'), holder.run.runId)).toEqual({ kind: 'missing' });
      expect(await l.take(tenantId, waiting.run.runId)).toMatchObject({ kind: 'deferred', run: { status: 'pending', attempts: 0 } });
      await l.cancel(tenantId, holder.run.runId);
      expect(await l.take(tenantId, holder.run.runId)).toMatchObject({ kind: 'ended', run: { status: 'interrupted', attempts: 0 } });
    });

    it('an admission claims uploads only when some wait: none, then the new ones, never ones claimed before', async () => {
      const s = store();
      const l = new RunLifecycle(s);
      const { tenantId, threadId, runOf } = await setup(s);
      // Per admission, the uploads its job was last built from: the run's job (`AdmitRequest.job`
      // may be called more than once, MySQL trying an admission without uploads first).
      const seen: string[][] = [];
      const admit = async (threadMetadata?: Record<string, string>) => {
        let last: string[] | undefined;
        const out = await l.admit({
          run: runOf(),
          whenBusy: 'reject',
          claimUploads: true,
          ...(threadMetadata ? { threadMetadata } : {}),
          job: (u: UploadRecord[]) => ((last = u.map((x) => x.uploadId)), { payload: new Uint8Array([1]) }),
        });
        if (last) seen.push(last);
        if (out.kind !== 'admitted') throw new Error(out.kind);
        await l.end({ tenantId, runId: out.run.runId, status: 'success', cause: 'finished' });
        return out.run.runId;
      };
      await admit();
      await s.addUpload(upload(tenantId, threadId, 'u1'));
      const second = await admit({ graph_id: 'agent' });
      await admit({ graph_id: 'agent' });
      await s.addUpload(upload(tenantId, threadId, 'u2'));
      const fourth = await admit();
      expect(seen).toEqual([[], ['u1'], [], ['u2']]);
      expect((await s.listUploads(tenantId, threadId)).map((u) => [u.uploadId, u.runId])).toEqual([
        ['u1', second],
        ['u2', fourth],
      ]);
      expect((await s.getThread(tenantId, threadId))?.metadata).toEqual({ graph_id: 'agent' });
    });

    it('a deferred admission claims the waiting uploads too (its take found the thread held)', async () => {
      const s = store();
      const l = new RunLifecycle(s);
      const { tenantId, threadId, runOf } = await setup(s);
      const holder = await l.admit({ run: runOf(), whenBusy: 'reject', claimUploads: true, job: () => ({ payload: new Uint8Array([1]) }) });
      await s.addUpload(upload(tenantId, threadId, 'late'));
      const seen: string[][] = [];
      const deferred = await l.admit({
        run: runOf(),
        whenBusy: 'defer',
        claimUploads: true,
        job: (u) => (seen.push(u.map((x) => x.uploadId)), { payload: new Uint8Array([1]) }),
      });
      expect([holder.kind, deferred.kind]).toEqual(['admitted', 'deferred']);
      // The last call is the run's job (an earlier one, MySQL's try without uploads, is discarded).
      expect(seen.at(-1)).toEqual(['late']);
    });
  });
}
