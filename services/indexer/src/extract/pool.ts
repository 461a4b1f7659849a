import { Worker } from 'node:worker_threads';
import type { Logger } from '@agentloop/core';
import { ExtractError } from './errors.js';
import type { WorkerRequest, WorkerResponse } from './protocol.js';

export interface ExtractorPoolOptions {
  /** Worker threads (jobs beyond this wait in a queue). */
  size: number;
  /** V8 old-generation cap of each worker: a document needing more kills only its worker. */
  maxHeapMb: number;
  /** A job running longer is stopped by terminating its worker. */
  timeoutMs: number;
  logger: Logger;
}

export type JobResult = Extract<WorkerResponse, { ok: true }>;
type Job = Omit<WorkerRequest, 'id'>;

interface Slot {
  worker: Worker | undefined;
  ready: Promise<void> | undefined;
  busy: boolean;
}

interface Queued {
  job: Job;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  resolve: (r: JobResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs document extraction in worker threads so that a pathological file
 * (deep recursion, runaway memory, endless loop) costs one worker, never the
 * service: each worker has a heap cap, each job a timeout; a worker that dies
 * or times out is replaced on the next job.
 */
export class ExtractorPool {
  private readonly slots: Slot[];
  private readonly queue: Queued[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: ExtractorPoolOptions) {
    this.slots = Array.from({ length: Math.max(1, opts.size) }, () => ({ worker: undefined, ready: undefined, busy: false }));
  }

  /**
   * Runs a job on the next free worker. `signal` (the request's deadline)
   * stops it early; `timeoutMs` overrides the pool's timeout for this job.
   */
  run(job: Job, signal?: AbortSignal, timeoutMs?: number): Promise<JobResult> {
    if (this.closed) return Promise.reject(new ExtractError('UNAVAILABLE', 'the indexer is shutting down'));
    return new Promise<JobResult>((resolve, reject) => {
      this.queue.push({ job, signal, timeoutMs: timeoutMs ?? this.opts.timeoutMs, resolve, reject });
      this.pump();
    });
  }

  /** Terminates every worker; queued jobs fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(new ExtractError('UNAVAILABLE', 'the indexer is shutting down'));
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
    for (const s of this.slots) s.worker = undefined;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const next = this.queue.shift();
      if (!next) return;
      if (next.signal?.aborted) {
        next.reject(new ExtractError('TIMEOUT', 'the request was cancelled before extraction started'));
        continue;
      }
      slot.busy = true;
      this.execute(slot, next)
        .then(next.resolve, next.reject)
        .finally(() => {
          slot.busy = false;
          this.pump();
        });
    }
  }

  private async execute(slot: Slot, q: Queued): Promise<JobResult> {
    if (!slot.worker) this.spawn(slot);
    await slot.ready;
    const worker = slot.worker;
    if (!worker) throw new ExtractError('UNAVAILABLE', 'the extraction worker could not start');
    if (q.signal?.aborted) throw new ExtractError('TIMEOUT', 'the request was cancelled before extraction started');
    const id = this.nextId++;
    const bytes = q.job.bytes;
    // Transfer the file's bytes; copy first when they are a view into a larger (pooled) buffer.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice();
    const req: WorkerRequest = { ...q.job, id, bytes: own };

    return new Promise<JobResult>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        q.signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        fn();
      };
      const kill = (err: ExtractError) => {
        finish(() => reject(err));
        this.discard(slot, worker);
      };
      const onMessage = (msg: WorkerResponse) => {
        if (msg.type !== 'result' || msg.id !== id) return;
        if (msg.ok) finish(() => resolve(msg));
        else finish(() => reject(new ExtractError(msg.error.code, msg.error.message)));
      };
      const onError = (err: Error & { code?: string }) => {
        this.opts.logger.warn({ err: err.message, code: err.code }, 'extraction worker failed');
        kill(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new ExtractError('INVALID_ARGUMENT', `the document needs more than the ${this.opts.maxHeapMb} MB extraction memory limit`)
            : new ExtractError('INTERNAL', `the extraction worker crashed (${err.message})`),
        );
      };
      const onExit = (code: number) => kill(new ExtractError('INTERNAL', `the extraction worker exited (code ${code})`));
      const onAbort = () => kill(new ExtractError('TIMEOUT', 'the request deadline passed during extraction; extraction was stopped'));
      const timer = setTimeout(() => {
        this.opts.logger.warn({ timeout_ms: q.timeoutMs }, 'extraction timed out; terminating its worker');
        kill(new ExtractError('TIMEOUT', `extraction took longer than ${formatMs(q.timeoutMs)} and was stopped`));
      }, q.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      q.signal?.addEventListener('abort', onAbort, { once: true });
      worker.postMessage(req, [own.buffer as ArrayBuffer]);
    });
  }

  private spawn(slot: Slot): void {
    const worker = startWorker(this.opts.maxHeapMb);
    slot.worker = worker;
    slot.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: { type?: string }) => {
        if (m.type !== 'ready') return;
        cleanup();
        resolve();
      };
      const onFail = (err: unknown) => {
        cleanup();
        this.discard(slot, worker);
        reject(new ExtractError('UNAVAILABLE', `the extraction worker could not start (${err instanceof Error ? err.message : String(err)})`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onFail);
        worker.off('exit', onFail);
      };
      worker.on('message', onMessage);
      worker.on('error', onFail);
      worker.on('exit', onFail);
    });
    slot.ready.catch(() => undefined);
    worker.unref();
  }

  private discard(slot: Slot, worker: Worker): void {
    if (slot.worker === worker) {
      slot.worker = undefined;
      slot.ready = undefined;
    }
    void worker.terminate().catch(() => undefined);
  }
}

/**
 * From dist the worker is worker.js beside this file; from the TypeScript
 * sources (tests, `tsx`), the worker registers tsx's loader first.
 */
function startWorker(maxHeapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.floor(maxHeapMb / 8))) };
  if (import.meta.url.endsWith('.ts')) {
    const url = new URL('./worker.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`;
    return new Worker(boot, { eval: true, resourceLimits });
  }
  return new Worker(new URL('./worker.js', import.meta.url), { resourceLimits });
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
