import { describe, expect, it } from 'vitest';
import { ReleaseJobError } from '@agentloop/queue';
import { UnavailableError } from '@agentloop/core';
import { failureOutcome, runEndOf } from './outcome.js';
import { RunCancelledError } from './cancellations.js';
import { log } from './testing.js';

const live = () => new AbortController().signal;
const aborted = (reason?: unknown) => AbortSignal.abort(reason);
const ctx = (over = {}) => ({ cancel: live(), timeout: live(), timeoutMs: 5_000, workerSignal: live(), draining: false, attempt: 0, attempts: 3, ...over });

describe('run outcome: failures', () => {
  it('a cancel wins over a timeout, a stopping worker and a drain', () => {
    const o = failureOutcome(
      new Error('aborted'),
      ctx({ cancel: aborted(new RunCancelledError('by the client')), timeout: aborted(), workerSignal: aborted(), draining: true }),
      'r1',
      log,
    );
    expect(o).toEqual({ kind: 'cancelled', reason: 'by the client' });
  });

  it('a timeout ends the run with a TimeoutError naming the limit', () => {
    expect(failureOutcome(new Error('aborted'), ctx({ timeout: aborted(), workerSignal: aborted() }), 'r1', log)).toEqual({
      kind: 'timeout',
      error: { error: 'TimeoutError', message: 'The run exceeded its time limit of 5000 ms.' },
    });
  });

  it('a stopping worker rethrows the error itself: the run stays resumable', () => {
    const err = new Error('worker stopped');
    expect(() => failureOutcome(err, ctx({ workerSignal: aborted(), draining: true }), 'r1', log)).toThrow(err);
  });

  it('a draining worker hands the job back (ReleaseJobError, cause kept)', () => {
    const err = new Error('The worker is shutting down');
    try {
      failureOutcome(err, ctx({ draining: true }), 'r9', log);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ReleaseJobError);
      expect((e as Error).message).toContain('r9');
      expect((e as Error).cause).toBe(err);
    }
  });

  it('an unreachable infrastructure is retried while attempts remain, and fails the run on the last one', () => {
    const down = new UnavailableError('nats down');
    expect(() => failureOutcome(down, ctx({ attempt: 1, attempts: 3 }), 'r1', log)).toThrow(down);
    expect(failureOutcome(down, ctx({ attempt: 2, attempts: 3 }), 'r1', log)).toMatchObject({ kind: 'failed', error: { message: 'nats down' } });
    const lost = Object.assign(new Error('gone'), { code: 'PROTOCOL_CONNECTION_LOST' });
    expect(() => failureOutcome(new Error('graph failed', { cause: lost }), ctx(), 'r1', log)).toThrow('graph failed');
  });

  it('any other error fails the run with its name and message; a non-Error is an "Error"', () => {
    expect(failureOutcome(new TypeError('bad'), ctx(), 'r1', log)).toEqual({ kind: 'failed', error: { error: 'TypeError', message: 'bad' } });
    expect(failureOutcome('boom', ctx(), 'r1', log)).toMatchObject({ kind: 'failed', error: { error: 'Error' } });
  });
});

describe('run outcome: end', () => {
  it('maps each ending outcome to the status, error and flags of the end transition', () => {
    const error = { error: 'X', message: 'm' };
    expect(runEndOf({ kind: 'success' })).toEqual({ status: 'success', error: undefined, waitsForHuman: false, reported: 'success' });
    expect(runEndOf({ kind: 'waits_for_human' })).toEqual({ status: 'success', error: undefined, waitsForHuman: true, reported: 'interrupted' });
    expect(runEndOf({ kind: 'cancelled', reason: 'r' })).toEqual({ status: 'interrupted', error: undefined, waitsForHuman: false, reported: 'interrupted' });
    expect(runEndOf({ kind: 'timeout', error })).toEqual({ status: 'timeout', error, waitsForHuman: false, reported: 'timeout' });
    expect(runEndOf({ kind: 'failed', error })).toEqual({ status: 'error', error, waitsForHuman: false, reported: 'error' });
  });
});
