import { randomUUID } from 'node:crypto';
import { create, fromBinary, RunJobSchema, runStatusFromName, toBinary, WebhookJobSchema, type RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import type { JobQueue, QueueWorker } from '@agentloop/queue';
import { RunLifecycle, type JsonObject, type RunErrorInfo, type Store } from '@agentloop/store';

/**
 * A test double of the orchestrator *service* (not of infrastructure): it
 * consumes the `runs` queue and drives the real run lifecycle (`RunLifecycle`
 * of @agentloop/store: start, end — with the thread's values and status, and
 * the thread handed to its next deferred run), publishing `values` and
 * `updates` events per step, an `error` event on failure, then `end`; and a
 * WebhookJob when the run asked for one. It has no lifecycle of its own.
 * Instead of a model it answers `echo: <last human message>`.
 */
export interface FakeOrchestratorOptions {
  runs: JobQueue;
  store: Store;
  events: RunEventStream;
  /** Where WebhookJobs go for runs with a webhook; without it webhooks are skipped. */
  webhooks?: JobQueue;
  /** The assistant reply for a run (default `echo: <text>`). Throwing makes the run fail with that error. */
  reply?: (job: RunJob, lastHumanText: string) => string | Promise<string>;
  /**
   * The interrupt a run stops at instead of finishing (a tool approval or question, as the real
   * orchestrator writes it under `__interrupt__`); undefined: the run finishes. The thread becomes
   * `interrupted` until a resume (a run with `command.resume`) runs.
   */
  interrupt?: (job: RunJob) => JsonObject | undefined;
  /** Awaited once the run is `running`, before any event: lets a test hold runs open. */
  gate?: (job: RunJob) => Promise<void>;
  concurrency?: number;
  webhookAttempts?: number;
  webhookBackoffMs?: number;
}

export interface FakeOrchestrator {
  /** Every RunJob taken from the queue, in order. */
  readonly jobs: RunJob[];
  close(): Promise<void>;
}

interface Message {
  id: string;
  type: string;
  content: unknown;
}

/** LangChain message dicts (`{type}` or OpenAI-style `{role}`) → `{id, type, content}`. */
function toMessages(input: unknown): Message[] {
  const raw = (input as { messages?: unknown } | null)?.messages;
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.map((m) => {
    if (typeof m === 'string') return { id: randomUUID(), type: 'human', content: m };
    const o = m as { id?: unknown; type?: unknown; role?: unknown; content?: unknown };
    const role = typeof o.type === 'string' ? o.type : typeof o.role === 'string' ? o.role : 'human';
    const type = role === 'user' ? 'human' : role === 'assistant' ? 'ai' : role;
    return { id: typeof o.id === 'string' ? o.id : randomUUID(), type, content: o.content ?? '' };
  });
}

export async function startFakeOrchestrator(opts: FakeOrchestratorOptions): Promise<FakeOrchestrator> {
  const jobs: RunJob[] = [];
  const { store, events } = opts;
  // The run's end, as the orchestrator announces it: `end`, then the webhook.
  const lifecycle = new RunLifecycle<RunJob>(store, { jobs: opts.runs });
  lifecycle.on('run.ended', async (e) => {
    await events.publish(e.run.runId, e.run.threadId, 'end', null);
    const job = e.ctx;
    if (!job?.webhookUrl || !opts.webhooks) return;
    const payload = {
      run_id: job.runId,
      thread_id: job.threadId,
      assistant_id: job.assistantId,
      status: e.run.status,
      values: e.values ?? {},
      ...(e.error ? { error: e.error.message } : {}),
    };
    const hook = create(WebhookJobSchema, {
      deliveryId: job.runId,
      url: job.webhookUrl,
      runId: job.runId,
      threadId: job.threadId,
      tenantId: job.tenantId,
      status: runStatusFromName(e.run.status),
      payloadJson: JSON.stringify(payload),
    });
    await opts.webhooks.enqueue(toBinary(WebhookJobSchema, hook), {
      jobId: job.runId,
      attempts: opts.webhookAttempts ?? 6,
      backoffMs: opts.webhookBackoffMs ?? 1000,
    });
  });

  const execute = async (job: RunJob): Promise<void> => {
    const existing = await store.getRun(job.tenantId, job.runId);
    if (!existing) return;
    const started = await lifecycle.start(existing);
    if (started.kind !== 'started') return;
    if (opts.gate) await opts.gate(job);

    const thread = await store.getThread(job.tenantId, job.threadId);
    const previous = (Array.isArray(thread?.values?.messages) ? thread.values.messages : []) as Message[];
    const input = job.inputJson ? (JSON.parse(job.inputJson) as unknown) : null;
    const added = toMessages(input);
    let text = [...added].reverse().find((m) => m.type === 'human')?.content;
    if (job.commandJson) text = `resume ${JSON.stringify((JSON.parse(job.commandJson) as { resume?: unknown }).resume)}`;
    let messages = [...previous, ...added];

    let status: 'success' | 'error' = 'success';
    let error: RunErrorInfo | undefined;
    await events.publish(job.runId, job.threadId, 'values', { messages });
    try {
      const content = opts.reply ? await opts.reply(job, String(text ?? '')) : `echo: ${String(text ?? '')}`;
      const ai: Message = { id: randomUUID(), type: 'ai', content };
      messages = [...messages, ai];
      await events.publish(job.runId, job.threadId, 'updates', { agent: { messages: [ai] } });
      await events.publish(job.runId, job.threadId, 'values', { messages });
    } catch (err) {
      status = 'error';
      error = { error: err instanceof Error ? err.name : 'Error', message: err instanceof Error ? err.message : String(err) };
      await events.publish(job.runId, job.threadId, 'error', error);
    }
    const stop = status === 'success' && !job.commandJson ? opts.interrupt?.(job) : undefined;
    const values: JsonObject = stop ? { messages, __interrupt__: [{ id: randomUUID(), value: stop }] } : { messages };
    if (stop) await events.publish(job.runId, job.threadId, 'values', { __interrupt__: values.__interrupt__ });
    const ended = await lifecycle.end(
      { tenantId: job.tenantId, runId: job.runId, status, values, ...(error ? { error } : {}), ...(stop ? { waitsForHuman: true } : {}), cause: 'finished' },
      job,
    );
    // Cancelled meanwhile: announce what the record says.
    if (ended.kind === 'already_ended') await lifecycle.replayEnd(ended.run, job, values);
  };

  const worker: QueueWorker = await opts.runs.process(
    async (j) => {
      const job = fromBinary(RunJobSchema, j.payload);
      jobs.push(job);
      await execute(job);
    },
    { concurrency: opts.concurrency ?? 4 },
  );
  return {
    jobs,
    close: () => worker.close(),
  };
}
