/**
 * The load generator: the official `@langchain/langgraph-sdk` Client, the same requests to every
 * target. A run is the 3-step agent loop: the model calls `now`, calls it again, then answers.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client } from '@langchain/langgraph-sdk';
import { cpuMs, rssBytes } from './proc.js';
import type { Target } from './targets.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export const ANSWER = 'It is now.';
const INPUT = { messages: [{ role: 'user', content: 'What time is it?' }] };

/**
 * One request body for every target: AgentLoop reads `configurable.model` (its scripted provider,
 * services/orchestrator/src/models/scripted.ts), the peer's graph reads `configurable.delay_ms`.
 */
export function runConfig(delayMs: number) {
  const turn = <T extends object>(t: T) => (delayMs > 0 ? { ...t, delay_ms: delayMs } : t);
  return {
    configurable: {
      model: {
        provider: 'scripted',
        turns: [turn({ tool_calls: [{ name: 'now', args: {} }] }), turn({ tool_calls: [{ name: 'now', args: {} }] }), turn({ content: ANSWER })],
      },
      delay_ms: delayMs,
    },
  };
}

/**
 * The same run with `write_file` (a tool with side effects: its calls go through the orchestrator's
 * effect ledger, a claim before and a completion after) in place of `now`. Only the trace workload
 * runs it, for the cost per tool call with the ledger included (issue 9).
 */
export function ledgerRunConfig() {
  const call = { name: 'write_file', args: { file_path: 'outputs/bench.txt', content: 'x' } };
  return { configurable: { model: { provider: 'scripted', turns: [{ tool_calls: [call] }, { tool_calls: [call] }, { content: ANSWER }] }, delay_ms: 0 } };
}

/** An SDK client that never retries, so that failures are counted instead of hidden. */
export function sdkClient(url: string): Client {
  return new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
}

/** Throws unless `values` is the finished 3-step conversation (a failed run must not count as fast). */
export function checkValues(values: unknown): void {
  const messages = (values as { messages?: Array<{ type?: string; content?: unknown }> } | null)?.messages;
  const types = messages?.map((m) => m.type).join(',');
  if (types !== 'human,ai,tool,ai,tool,ai' || messages?.[5]?.content !== ANSWER) {
    throw new Error(`unexpected run result: ${JSON.stringify(values).slice(0, 300)}`);
  }
}

export interface WaitRound {
  runs: number;
  errors: number;
  firstError?: string;
  /** From the first request to the last completion. */
  elapsedMs: number;
  /** threads.create + runs.wait, per run. */
  latencies: number[];
  /** runs.wait alone. */
  waitLatencies: number[];
  /** CPU the target's processes used, ms. */
  cpuMs: number;
  /** 1-minute load average of the machine when the round ended. */
  loadavg: number;
  /** CPU the other targets (idle, not under load) used during this round, ms. */
  bystanderCpuMs?: number;
}

/**
 * `concurrency` clients in a closed loop for `seconds`, each run on a new thread
 * (`threads.create`, then `runs.wait`). Runs started before the end are waited for and counted.
 */
export async function waitLoad(target: Target, opts: { concurrency: number; seconds: number }): Promise<WaitRound> {
  const client = sdkClient(target.url);
  const config = runConfig(0);
  const latencies: number[] = [];
  const waitLatencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const cpu0 = sumCpu(target);
  const start = performance.now();
  const stopAt = start + opts.seconds * 1000;
  let lastEnd = start;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < stopAt) {
        const t0 = performance.now();
        try {
          const thread = await client.threads.create();
          const t1 = performance.now();
          const values = await client.runs.wait(thread.thread_id, 'agent', { input: INPUT, config });
          checkValues(values);
          const t2 = performance.now();
          latencies.push(t2 - t0);
          waitLatencies.push(t2 - t1);
        } catch (err) {
          errors++;
          firstError ??= errorText(err);
          await new Promise((r) => setTimeout(r, 50));
        }
        lastEnd = performance.now();
      }
    }),
  );
  return { runs: latencies.length, errors, firstError, elapsedMs: lastEnd - start, latencies, waitLatencies, cpuMs: sumCpu(target) - cpu0, loadavg: loadavg() };
}

export interface BackgroundRound {
  submitted: number;
  submitErrors: number;
  firstError?: string;
  /** From the first submission to the last one answered. */
  submitMs: number;
  /** Runs whose webhook arrived before the deadline, and how many of those did not succeed. */
  done: number;
  failed: number;
  /** From the first submission to the last webhook. */
  elapsedMs: number;
  /** submit (request sent) → webhook received, per finished run. */
  latencies: number[];
  duplicates: number;
  rssBaseline: number;
  rssPeak: number;
  cpuMs: number;
  loadavg: number;
}

/**
 * `runs` background runs, each on a new thread (`runs.create` with `if_not_exists: "create"` and a
 * webhook), sent by `submitters` concurrent clients as fast as the target accepts them; then waits
 * for every webhook until `deadlineMs` after the last submission. RSS of the target's Node
 * processes is sampled throughout.
 */
export async function backgroundLoad(
  target: Target,
  receiver: WebhookReceiver,
  opts: { runs: number; submitters: number; delayMs: number; deadlineMs: number },
): Promise<BackgroundRound> {
  const client = sdkClient(target.url);
  const config = runConfig(opts.delayMs);
  const submittedAt = new Map<string, number>();
  let submitErrors = 0;
  let firstError: string | undefined;
  const rssOf = () => target.nodePids().reduce((n, pid) => n + rssBytes(pid), 0);
  const rssBaseline = rssOf();
  let rssPeak = rssBaseline;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf())), 200);
  const cpu0 = sumCpu(target);
  const duplicates0 = receiver.duplicates();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.submitters }, async () => {
      while (next < opts.runs) {
        next++;
        const t0 = performance.now();
        try {
          const run = await client.runs.create(randomUUID(), 'agent', { input: INPUT, config, webhook: receiver.url, ifNotExists: 'create' });
          submittedAt.set(run.run_id, t0);
        } catch (err) {
          submitErrors++;
          firstError ??= errorText(err);
        }
      }
    }),
  );
  const submitEnd = performance.now();
  await receiver.waitAll(submittedAt.keys(), submitEnd + opts.deadlineMs);
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, rssOf());
  const latencies: number[] = [];
  let failed = 0;
  let lastArrival = start;
  for (const [runId, t0] of submittedAt) {
    const at = receiver.arrivals.get(runId);
    if (at === undefined) continue;
    latencies.push(at - t0);
    lastArrival = Math.max(lastArrival, at);
    if (receiver.statuses.get(runId) !== 'success') failed++;
  }
  return {
    submitted: submittedAt.size,
    submitErrors,
    firstError,
    submitMs: submitEnd - start,
    done: latencies.length,
    failed,
    elapsedMs: lastArrival - start,
    latencies,
    duplicates: receiver.duplicates() - duplicates0,
    rssBaseline,
    rssPeak,
    cpuMs: sumCpu(target) - cpu0,
    loadavg: loadavg(),
  };
}

const loadavg = () => os.loadavg()[0]!;

/** The message and, for a network failure ("fetch failed"), its cause. */
function errorText(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message} (${cause})` : String(e.message ?? err);
}

/** CPU (ms) the target's processes have used so far. */
export function sumCpu(target: Target): number {
  return target.allPids().reduce((n, pid) => n + cpuMs(pid), 0);
}
