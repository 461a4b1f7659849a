import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteQueueDatabase } from '@agentloop/queue';
import { announcingQueue, wakeOnAnnouncement } from './queue-wake.js';

/** Polls until `cond` holds (or fails after a generous deadline): no fixed sleeps. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('queue wake-ups between two connections to one queue file', () => {
  const open: SqliteQueueDatabase[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map((d) => d.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has the other connection take a job as soon as it is announced, delayed ones when due', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'queue-wake-'));
    const file = path.join(dir, 'queue.sqlite');
    // Two connections as the two threads have them; the stalled-job check (the only other wake-up) is an hour away.
    const adding = new SqliteQueueDatabase({ path: file });
    const working = new SqliteQueueDatabase({ path: file });
    open.push(adding, working);
    const { port1, port2 } = new MessageChannel();
    const runsHere = working.queue('runs');
    wakeOnAnnouncement(port2, [runsHere]);
    const done: string[] = [];
    await runsHere.process(async (job) => void done.push(new TextDecoder().decode(job.payload)), { concurrency: 2, stalledIntervalMs: 3_600_000 });

    // Its first take (scheduled by process() for the next turn of the event loop) finds the file empty.
    await new Promise((r) => setImmediate(r));
    expect(await runsHere.stats()).toMatchObject({ waiting: 0, active: 0 });

    const runs = announcingQueue(adding.queue('runs'), port1);
    expect(await runs.enqueue(new TextEncoder().encode('now'), { jobId: 'job-1' })).toEqual({ jobId: 'job-1', added: true });
    await until(() => done.includes('now'), 'the announced job');
    await runs.enqueue(new TextEncoder().encode('later'), { jobId: 'job-2', delayMs: 200 });
    await until(() => done.includes('later'), 'the delayed job');
    // A duplicate id adds nothing and announces nothing.
    expect(await runs.enqueue(new TextEncoder().encode('again'), { jobId: 'job-1' })).toEqual({ jobId: 'job-1', added: false });
    expect(await runs.getState('job-2')).toBe('completed');
    port1.close();
  });
});
