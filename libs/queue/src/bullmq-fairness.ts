/**
 * Start-time fair queueing on BullMQ (fair-tags.ts; docs/adr/0008-fair-scheduling.md) with what
 * open-source BullMQ has: job priorities (lower first, FIFO among equals) and Lua scripts on the
 * queue's Redis. The virtual time V, the groups' finish tags and the priority base live in Redis
 * beside the queue's keys (`<prefix>:<queue>:fair:*`) and change only inside a script, so every
 * gateway and orchestrator replica tags against the same clock.
 */
import { errorMessage, type Logger } from '@agentloop/core';
import { Job as BullJob, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { finishTag, needsRebase, priorityOf, weightOf, type FairnessOptions } from './fair-tags.js';

// Numbers cross the Lua boundary as strings: Redis turns a Lua number reply into an integer.
const TAG_SCRIPT = `
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local f = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local s = math.max(v, f)
redis.call('HSET', KEYS[2], ARGV[1], string.format('%.17g', s + tonumber(ARGV[2])))
return { string.format('%.17g', s), redis.call('GET', KEYS[3]) or '0' }`;

const START_SCRIPT = `
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local s = tonumber(ARGV[1])
if s > v then v = s; redis.call('SET', KEYS[1], string.format('%.17g', v)) end
return { string.format('%.17g', v), redis.call('GET', KEYS[2]) or '0' }`;

// Moves the base to V, only if nobody rebased since the caller read it: one replica rewrites priorities.
const REBASE_SCRIPT = `
local base = redis.call('GET', KEYS[2]) or '0'
if tonumber(base) ~= tonumber(ARGV[1]) then return false end
local v = redis.call('GET', KEYS[1]) or '0'
redis.call('SET', KEYS[2], v)
return v`;

interface FairCommands {
  fairTag(v: string, finish: string, base: string, group: string, inc: string): Promise<[string, string]>;
  fairStart(v: string, base: string, tag: string): Promise<[string, string]>;
  fairRebase(v: string, base: string, expected: string): Promise<string | null>;
}

/** The fields fairness adds to a job's data: its tag and group. */
export interface FairData {
  s?: number;
  g?: string;
}

const REBASE_PAGE = 500;

export class BullMqFairness {
  private readonly redis: Redis & FairCommands;
  private readonly keys: { v: string; finish: string; base: string };
  private rebasing: Promise<void> | undefined;

  constructor(
    private readonly queue: Queue,
    connection: Redis,
    keyPrefix: string,
    private readonly opts: FairnessOptions,
    private readonly logger: Logger,
  ) {
    connection.defineCommand('fairTag', { numberOfKeys: 3, lua: TAG_SCRIPT });
    connection.defineCommand('fairStart', { numberOfKeys: 2, lua: START_SCRIPT });
    connection.defineCommand('fairRebase', { numberOfKeys: 2, lua: REBASE_SCRIPT });
    this.redis = connection as Redis & FairCommands;
    const k = `${keyPrefix}:${queue.name}:fair`;
    this.keys = { v: `${k}:v`, finish: `${k}:finish`, base: `${k}:base` };
  }

  /** The Redis key of the priority base, for a caller that reads it with other keys in one round trip. */
  get baseKey(): string {
    return this.keys.base;
  }

  /** Tags a job of `group` about to be added: its tag, its priority and the base the priority is relative to. */
  async tag(group: string): Promise<{ tag: number; priority: number; base: number }> {
    const inc = finishTag(0, weightOf(this.opts, group));
    const [s, b] = await this.redis.fairTag(this.keys.v, this.keys.finish, this.keys.base, group, String(inc));
    const tag = Number(s);
    const base = Number(b);
    return { tag, priority: priorityOf(tag, base), base };
  }

  /**
   * After the add: when a rebase happened between the tag and the add, the job's priority is
   * relative to the old base — rewrite it (the rebase's own pass may have listed the queue before
   * the job was in it). `current`: the base as read after the add (`baseKey`), if the caller read
   * it already; else it is read here.
   */
  async afterAdd(jobId: string, tag: number, base: number, current?: string | null): Promise<void> {
    const now = Number((current === undefined ? await this.redis.get(this.keys.base) : current) ?? '0');
    if (now === base) return;
    const job = await BullJob.fromId(this.queue, jobId);
    await job?.changePriority({ priority: priorityOf(tag, now) }).catch(() => undefined);
  }

  /** A worker starts a job tagged `tag`: V moves on; a rebase runs in the background when V left the base far behind. */
  async started(tag: number): Promise<void> {
    const [v, b] = await this.redis.fairStart(this.keys.v, this.keys.base, String(tag));
    if (needsRebase(Number(v), Number(b)) && !this.rebasing) {
      this.rebasing = this.rebase(b)
        .catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'fair-queue priority rebase failed; the next start retries'))
        .finally(() => (this.rebasing = undefined));
    }
  }

  /**
   * Moves the priority base to V and rewrites the priority of every job still waiting or delayed
   * from its stored tag, so tags far ahead of the old base get exact priorities again. Rare: once
   * per REBASE_AFTER of virtual time (about 10,000 runs of weight 1).
   */
  private async rebase(expected: string): Promise<void> {
    const moved = await this.redis.fairRebase(this.keys.v, this.keys.base, expected);
    if (moved === null) return;
    const base = Number(moved);
    // Listed first, rewritten after: changePriority re-inserts a job, which would shift the pages under a running listing.
    const jobs: BullJob[] = [];
    for (const state of ['prioritized', 'delayed'] as const) {
      for (let from = 0; ; from += REBASE_PAGE) {
        const page = await this.queue.getJobs([state], from, from + REBASE_PAGE - 1, true);
        jobs.push(...page);
        if (page.length < REBASE_PAGE) break;
      }
    }
    let rewritten = 0;
    for (const job of jobs) {
      const tag = (job.data as FairData | undefined)?.s;
      if (tag === undefined) continue;
      const priority = priorityOf(tag, base);
      if (priority === job.priority) continue;
      await job.changePriority({ priority }).catch(() => undefined);
      rewritten++;
    }
    this.logger.info({ base, rewritten }, 'fair-queue priorities rebased');
  }
}
