import { describe, expect, it } from 'vitest';
import { create, RunJobSchema, toBinary } from '@agentloop/proto';
import type { RunRecord } from '@agentloop/store';
import { abandonRun, deadLetterRun, type DeadLetterDeps } from './dead-letter.js';
import { fakeJob, fakeRun, log, recordingEvents, recordingLifecycle } from './testing.js';

function deps(run: RunRecord | undefined, stored?: Uint8Array) {
  const events = recordingEvents();
  const lifecycle = recordingLifecycle();
  const deadLettered: unknown[] = [];
  const d = {
    store: { getRun: async () => run },
    events,
    lifecycle: {
      ...lifecycle,
      async deadLetter(req: unknown, ctx: unknown) {
        deadLettered.push([req, ctx]);
        return { kind: 'ended' as const, run: fakeRun({ status: 'error' }) };
      },
      async storedJob() {
        return stored ? { payload: stored, attempts: 3, backoffMs: 1000 } : undefined;
      },
    },
    logger: log,
    redrive: { attempts: 5 },
  } as unknown as DeadLetterDeps;
  return { d, events, lifecycle, deadLettered };
}

const jobBytes = (runId: string) => toBinary(RunJobSchema, create(RunJobSchema, { runId, threadId: 'th1', tenantId: 't1' }));

describe('run abandon', () => {
  it('records an error end with the cause, after publishing the error', async () => {
    const { d, events, lifecycle } = deps(fakeRun());
    await abandonRun(d, fakeJob(), new Error('store down'));
    expect(events.published).toEqual([{ event: 'error', data: { error: 'Error', message: 'The run could not be executed: store down' } }]);
    expect(lifecycle.calls[0]!.args[0]).toMatchObject({ status: 'error', cause: 'abandoned' });
  });

  it('leaves a finished or missing run alone', async () => {
    for (const run of [fakeRun({ status: 'success' }), undefined]) {
      const { d, events, lifecycle } = deps(run);
      await abandonRun(d, fakeJob(), new Error('x'));
      expect(events.published).toEqual([]);
      expect(lifecycle.calls).toEqual([]);
    }
  });

  it('announces the recorded end when the record ended first', async () => {
    const { d } = deps(fakeRun());
    const replayed: unknown[] = [];
    d.lifecycle.end = async () => ({ kind: 'already_ended', run: fakeRun({ status: 'interrupted' }) });
    d.lifecycle.replayEnd = async (...args) => void replayed.push(args);
    await abandonRun(d, fakeJob(), new Error('x'));
    expect(replayed).toHaveLength(1);
  });
});

describe('run dead-letter', () => {
  it("keeps the queue's copy of the job (with the re-drive settings) when none is stored", async () => {
    const { d, events, deadLettered } = deps(fakeRun());
    const payload = jobBytes('r1');
    expect(await deadLetterRun(d, fakeRun(), 'stalled 3 times', payload)).toBe(true);
    expect(events.published[0]).toEqual({ event: 'error', data: { error: 'DeadLetterError', message: 'The run was dead-lettered: stalled 3 times' } });
    const [req, ctx] = deadLettered[0] as [{ job: unknown; reason: string }, { job: { runId: string } }];
    expect(req).toMatchObject({ reason: 'stalled 3 times', job: { payload, attempts: 5, backoffMs: 1000 } });
    expect(ctx.job.runId).toBe('r1');
  });

  it('prefers the stored job and keeps nothing more; an unreadable job leaves the end without context', async () => {
    const { d, deadLettered } = deps(fakeRun(), jobBytes('stored'));
    await deadLetterRun(d, fakeRun(), 'gone', jobBytes('queued'));
    expect(deadLettered[0]).toEqual([
      expect.objectContaining({ job: undefined }),
      expect.objectContaining({ job: expect.objectContaining({ runId: 'stored' }) }),
    ]);
    const unreadable = deps(fakeRun());
    await deadLetterRun(unreadable.d, fakeRun(), 'gone', new Uint8Array([0xff, 0xff, 0xff]));
    expect((unreadable.deadLettered[0] as unknown[])[1]).toBeUndefined();
  });

  it('does nothing to a run that already ended', async () => {
    const { d, events, deadLettered } = deps(fakeRun({ status: 'timeout' }));
    expect(await deadLetterRun(d, fakeRun(), 'gone', undefined)).toBe(false);
    expect(events.published).toEqual([]);
    expect(deadLettered).toEqual([]);
  });
});
