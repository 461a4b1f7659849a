/**
 * Parked jobs on BullMQ (DeferJobError with a group; docs/adr/0008-fair-scheduling.md): a job
 * deferred under a group is delayed as usual and recorded in a sorted set of its group by fairness
 * tag (`<prefix>:<queue>:parked:<group>`), so `wake(group, n)` can promote the lowest-tagged ones
 * before their delay is over. The set is only a hint: an entry whose job is no longer delayed (its
 * delay ran out, it was woken elsewhere, it ended) is dropped when popped.
 */
import { Job as BullJob, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';

export class BullMqParking {
  constructor(
    private readonly queue: Queue,
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  // Group names are tenant ids ([A-Za-z0-9_.-]), so they cannot reach into another key.
  private key(group: string): string {
    return `${this.keyPrefix}:${this.queue.name}:parked:${group}`;
  }

  /** Records a job just moved to delayed under its group. */
  async park(group: string, tag: number, jobId: string): Promise<void> {
    await this.redis.zadd(this.key(group), String(tag), jobId);
  }

  /** Promotes up to `count` parked jobs of `group`, lowest tag first; resolves to how many were promoted. */
  async wake(group: string, count: number): Promise<number> {
    let woken = 0;
    while (woken < count) {
      const popped = await this.redis.zpopmin(this.key(group), 1);
      const jobId = popped[0];
      if (jobId === undefined) break;
      const job = await BullJob.fromId(this.queue, jobId);
      if (!job) continue;
      try {
        await job.promote();
        woken++;
      } catch {
        // Not delayed any more: nothing to wake.
      }
    }
    return woken;
  }
}
