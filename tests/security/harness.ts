/**
 * Harness of the security suite (issue 18): the attacked server as a child process, a prober that
 * measures `/ok` latency and the server's RSS from a worker thread while an attack runs, HTTP and
 * run helpers, a leak detector for error text and a gRPC stream watcher that fails on a hang.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type * as grpc from '@grpc/grpc-js';
import { EMBEDDED_TEST_THREADS } from '../e2e/test-threads.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = path.join(REPO_ROOT, 'tests', 'security', 'server-entry.ts');

/** The two tenants of every attacked server. Tenant A is the victim, tenant B the neighbour (or the attacker). */
export const KEY_A = 'sec-key-of-acme-0123456789';
export const KEY_B = 'sec-key-of-globex-9876543210';
export const TENANT_A = 'acme';
export const TENANT_B = 'globex';
export const API_KEYS = `${KEY_A}:${TENANT_A},${KEY_B}:${TENANT_B}`;

/** The key id the gateway records for a key (runs.proto RunJob.api_key_id: `key_` + 12 hex digits of its SHA-256). */
export const keyId = (key: string): string => `key_${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 12)}`;

/** The budget the issue sets for `/ok` during every attack, and the RSS ceiling under the long-path and nested-JSON attacks. */
export const OK_BUDGET_MS = 100;
/**
 * What /ok must stay under while a run carries several MB of state in EMBEDDED mode: there the
 * checkpoint saver (better-sqlite3), the run records and the event stream serialize a thread's
 * whole state on the one event loop, about 40 ms per MB per step on this 2-core machine (README,
 * Security: what is not protected). The server must stay up and answer — a liveness bound, not the
 * 100 ms budget, which holds up to 512 KiB of state (tested) and in cluster mode for the gateway.
 */
export const LARGE_STATE_OK_BUDGET_MS = 3_000;
export const RSS_CEILING_MB = 500;

export interface ServerChild {
  url: string;
  /** `127.0.0.1:<port>` of the gRPC API. */
  grpcAddress: string;
  pid: number;
  child: ChildProcess;
  /** DATA_DIR as given, and its real path. */
  dataDir: string;
  realDataDir: string;
  /** Real path of `<DATA_DIR>/workspaces`. */
  workspaceRoot: string;
  /** Every output line of the child. */
  logs: string[];
  /** Resolves with `{code, signal}` once the child exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Current RSS of the child in MB (0 once it has exited). */
  rssMb(): number;
  /** Collects garbage in the child (SIGUSR2, see server-entry.ts) and returns its live memory in MB: heap used + external. */
  liveMb(): Promise<{ liveMb: number; rssMb: number }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how the process ended and how long it took. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number; killed: boolean }>;
  /** Removes DATA_DIR (after stop). */
  cleanup(): void;
}

export interface SpawnOptions {
  /** Added to the child's environment (built from scratch: PATH, HOME, DATA_DIR, HOST, ports, LOG_LEVEL). */
  env?: Record<string, string>;
  /** Reuse a DATA_DIR (a restart); default: a new temporary one. */
  dataDir?: string;
  readyTimeoutMs?: number;
  /** Extra node flags for the child (e.g. --cpu-prof to find what blocks the event loop). */
  nodeArgs?: string[];
}

/** The environment of a child with API keys for both tenants and the scripted model and loopback webhooks allowed explicitly. */
export const ATTACK_ENV: Record<string, string> = {
  AGENTLOOP_API_KEYS: API_KEYS,
  ALLOW_SCRIPTED_MODEL: 'true',
  WEBHOOK_ALLOW: '127.0.0.1',
  TOOL_CALL_TIMEOUT_MS: '10000',
  SHUTDOWN_GRACE_MS: '3000',
};

/** Starts AgentLoop embedded in a child process (sources through tsx, no build) and waits until it listens. */
export async function spawnServer(opts: SpawnOptions = {}): Promise<ServerChild> {
  // Starting a server is a few seconds of CPU: not while another file's attack is being measured.
  return exclusive(() => startServerProcess(opts));
}

async function startServerProcess(opts: SpawnOptions): Promise<ServerChild> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'agentloop-sec-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...(process.env.PYENV_ROOT ? { PYENV_ROOT: process.env.PYENV_ROOT } : {}),
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    GRPC_PORT: '0',
    LOG_LEVEL: 'warn',
    EMBEDDED_THREADS: EMBEDDED_TEST_THREADS,
    ...opts.env,
  };
  const child = spawn(process.execPath, ['--expose-gc', ...(opts.nodeArgs ?? []), '--conditions=@agentloop/source', '--import', 'tsx', ENTRY], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let onReady: ((line: string) => void) | undefined;
  const heapWaiters: Array<(line: string) => void> = [];
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (d: string) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        // Keep the log bounded: a hostile run can make the server log a lot.
        if (logs.length < 5000) logs.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line);
        if (line.startsWith('AGENTLOOP_READY ')) onReady?.(line);
        if (line.startsWith('AGENTLOOP_HEAP ')) heapWaiters.splice(0).forEach((w) => w(line));
      }
    });
  }
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const ready = await new Promise<{ url: string; grpcPort: number | null }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the attacked server did not start within ${opts.readyTimeoutMs ?? 90_000} ms:\n${logs.slice(-30).join('\n')}`));
    }, opts.readyTimeoutMs ?? 90_000);
    onReady = (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line.slice('AGENTLOOP_READY '.length)) as { url: string; grpcPort: number | null });
    };
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the attacked server exited (${code ?? signal}) before listening:\n${logs.slice(-30).join('\n')}`));
    });
  });
  const pid = child.pid!;
  prioritize([pid]);
  const realDataDir = realpathSync(dataDir);
  return {
    url: ready.url,
    grpcAddress: `127.0.0.1:${ready.grpcPort ?? 0}`,
    pid,
    child,
    dataDir,
    realDataDir,
    workspaceRoot: path.join(realDataDir, 'workspaces'),
    logs,
    exited,
    rssMb: () => readRssMb(pid),
    liveMb: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the server did not report its heap within 30 s')), 30_000);
        heapWaiters.push((line) => {
          clearTimeout(timer);
          const m = JSON.parse(line.slice('AGENTLOOP_HEAP '.length)) as { gc: boolean; heapUsed: number; external: number; rss: number };
          if (!m.gc) reject(new Error('the server runs without --expose-gc'));
          else resolve({ liveMb: (m.heapUsed + m.external) / 1024 / 1024, rssMb: m.rss / 1024 / 1024 });
        });
        child.kill('SIGUSR2');
      }),
    async stop(graceMs = 10_000) {
      const started = Date.now();
      if (child.exitCode !== null || child.signalCode !== null) return { ...(await exited), ms: 0, killed: false };
      child.kill('SIGTERM');
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, graceMs);
      const how = await exited;
      clearTimeout(timer);
      return { ...how, ms: Date.now() - started, killed };
    },
    cleanup() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Raises the scheduling priority of the attacked processes' main threads (where `/ok` is answered),
 * so that on a shared machine the latency measured is the server's, not time taken by neighbouring
 * processes. Priority does not make blocking code any faster. Needs CAP_SYS_NICE (root); without it
 * this does nothing.
 */
export function prioritize(pids: number[]): void {
  for (const pid of pids) {
    try {
      setPriority(pid, -10);
    } catch {
      // Not permitted: measure at normal priority.
    }
  }
}

/** VmRSS of a process in MB (0 when it is gone). */
export function readRssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------
// The prober: GET /ok every ~20 ms and the RSS of the watched processes, from a worker thread so
// that whatever the test's own thread does (building a 200 KB path, parsing a large answer) does
// not count as the server's latency.

export interface ProbeStats {
  /** Completed /ok probes. */
  samples: number;
  /** Worst /ok latency in ms, including a probe still outstanding when the prober stopped. */
  worstMs: number;
  /** Probes that failed (error, non-200, or no answer within 5 s). */
  failures: number;
  /** Peak RSS in MB of each watched pid. */
  peakRssMb: Record<number, number>;
}

const PROBER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const fs = require('node:fs');
const { url, pids, everyMs } = workerData;
// This thread only (Linux priorities are per thread); see prioritize() in harness.ts.
try { require('node:os').setPriority(-10); } catch {}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let stopping = false, samples = 0, worst = 0, failures = 0, inflightSince = 0;
const peak = {};
const rss = (pid) => { try { const m = /VmRSS:\\s+(\\d+)\\s+kB/.exec(fs.readFileSync('/proc/' + pid + '/status', 'utf8')); return m ? Number(m[1]) / 1024 : 0; } catch { return 0; } };
const sampleRss = () => { for (const pid of pids) peak[pid] = Math.max(peak[pid] || 0, rss(pid)); };
function probe() {
  if (stopping) return;
  sampleRss();
  const t0 = performance.now();
  inflightSince = t0;
  let done = false;
  const finish = (ok) => {
    if (done) return; done = true; inflightSince = 0;
    const ms = performance.now() - t0;
    worst = Math.max(worst, ms); samples++; if (!ok) failures++;
    setTimeout(probe, Math.max(0, everyMs - ms));
  };
  const req = http.get(url + '/ok', { agent, timeout: 5000 }, (res) => { res.resume(); res.on('end', () => finish(res.statusCode === 200)); res.on('error', () => finish(false)); });
  req.on('timeout', () => { req.destroy(); finish(false); });
  req.on('error', () => finish(false));
}
setInterval(sampleRss, 50);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  stopping = true; sampleRss();
  if (inflightSince) worst = Math.max(worst, performance.now() - inflightSince);
  parentPort.postMessage({ samples, worstMs: worst, failures, peakRssMb: peak });
});
probe();
`;

export class Prober {
  private readonly worker: Worker;

  constructor(url: string, pids: number[], everyMs = 20) {
    this.worker = new Worker(PROBER_SOURCE, { eval: true, workerData: { url, pids, everyMs } });
  }

  async stop(): Promise<ProbeStats> {
    const stats = once(this.worker, 'message').then(([m]) => m as ProbeStats);
    this.worker.postMessage('stop');
    const out = await stats;
    await this.worker.terminate();
    return out;
  }
}

/** Runs `attack` while probing `/ok` at `url` (and the RSS of `pids`); returns its result and the probe. */
export async function underAttack<T>(url: string, pids: number[], attack: () => Promise<T>): Promise<{ result: T; probe: ProbeStats }> {
  return exclusive(() => measure(url, pids, attack));
}

async function measure<T>(url: string, pids: number[], attack: () => Promise<T>): Promise<{ result: T; probe: ProbeStats }> {
  const prober = new Prober(url, pids);
  // A few probes before the attack, so the prober has a connection and a baseline.
  await sleep(60);
  let result: T;
  try {
    result = await attack();
  } finally {
    // Keep probing a little after the attack: a freeze that outlives the request counts too.
    await sleep(100);
  }
  const probe = await prober.stop();
  return { result: result!, probe };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// One measured attack at a time across the suite's files. Vitest runs two files at once (forks);
// an attack measured in one would otherwise pay for the CPU of a 30 MB run or a server start in the
// other. A directory lock in the temp dir (mkdir is atomic), owned by a pid; a dead owner's lock is
// taken over. Re-entrant within a process (a measured attack inside a locked section).

const LOCK_DIR = path.join(tmpdir(), 'agentloop-security-suite.lock');
let held = 0;

function ownerAlive(): boolean {
  let owner: number;
  try {
    owner = Number(readFileSync(path.join(LOCK_DIR, 'pid'), 'utf8'));
  } catch {
    return true; // just created, pid not written yet
  }
  if (!Number.isInteger(owner) || owner <= 0) return true;
  try {
    process.kill(owner, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function acquire(timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      writeFileSync(path.join(LOCK_DIR, 'pid'), String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!ownerAlive()) rmSync(LOCK_DIR, { recursive: true, force: true });
    }
    if (Date.now() > deadline) throw new Error(`the security suite's lock ${LOCK_DIR} stayed taken for ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** Runs fn while no other file of the suite runs a measured attack or heavy work. */
export async function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  if (held === 0) await acquire();
  held++;
  try {
    return await fn();
  } finally {
    held--;
    if (held === 0) rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// HTTP

export interface Answer {
  status: number;
  text: string;
  /** Parsed body when JSON, else undefined. */
  json: unknown;
  headers: Headers;
}

/** One HTTP request with a client-side deadline; `key` '' sends no API key. */
export async function call(
  url: string,
  key: string,
  method: string,
  pathname: string,
  body?: unknown,
  opts: { timeoutMs?: number; headers?: Record<string, string>; raw?: string | Buffer | FormData } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(key ? { 'x-api-key': key } : {}), ...opts.headers };
  let payload: string | Buffer | FormData | undefined = opts.raw;
  if (payload === undefined && body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers,
    ...(payload === undefined ? {} : { body: payload as RequestInit['body'] }),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

export const scripted = (turns: unknown[]) => ({ configurable: { model: { provider: 'scripted', turns } } });
export const userInput = (content = 'attack') => ({ messages: [{ role: 'user', content }] });

export type Msg = { type: string; content: unknown; name?: string; tool_call_id?: string };
export type Values = { messages?: Msg[]; __interrupt__?: Array<{ value: Record<string, unknown> }>; __error__?: { error?: string; message?: string } };

/** A thread of `key`'s tenant. */
export async function newThread(url: string, key: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await call(url, key, 'POST', '/threads', body);
  if (res.status !== 200) throw new Error(`POST /threads answered ${res.status}: ${res.text}`);
  return (res.json as { thread_id: string }).thread_id;
}

/** Runs scripted turns on a thread and waits (POST /threads/{id}/runs/wait); returns the answer. */
export async function runWait(
  url: string,
  key: string,
  threadId: string,
  turns: unknown[],
  opts: { timeoutMs?: number; body?: Record<string, unknown> } = {},
): Promise<Answer> {
  return call(
    url,
    key,
    'POST',
    `/threads/${threadId}/runs/wait`,
    { assistant_id: 'agent', input: userInput(), config: scripted(turns), ...opts.body },
    { timeoutMs: opts.timeoutMs ?? 20_000 },
  );
}

/** The tool messages of the last run of a /wait answer (the values hold the whole thread: those after the last human message). */
export const toolMessages = (v: Values | undefined): Msg[] => {
  const msgs = v?.messages ?? [];
  let start = 0;
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i]!.type === 'human') {
      start = i + 1;
      break;
    }
  }
  return msgs.slice(start).filter((m) => m.type === 'tool');
};
export const text = (m: Msg | undefined): string => (typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? ''));

export async function threadStatus(url: string, key: string, threadId: string): Promise<string> {
  const res = await call(url, key, 'GET', `/threads/${threadId}`);
  return (res.json as { status?: string } | undefined)?.status ?? `http ${res.status}`;
}

/** Polls until `fn` returns a value (not undefined) or the deadline passes. */
export async function poll<T>(fn: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 100): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) return undefined;
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------
// Leaks

/** Host paths that must never appear in anything the API returns. */
export function hostPaths(server: Pick<ServerChild, 'dataDir' | 'realDataDir' | 'workspaceRoot'>): string[] {
  return [
    ...new Set([
      server.dataDir,
      server.realDataDir,
      server.workspaceRoot,
      path.join(REPO_ROOT, 'skills'),
      REPO_ROOT,
      realpathSync(REPO_ROOT),
      `${tmpdir()}/`,
      '/tmp/',
      'node_modules',
    ]),
  ];
}

/** The host paths found in `text` (empty when nothing leaks). */
export function leaksIn(text: string, forbidden: readonly string[]): string[] {
  return forbidden.filter((p) => text.includes(p));
}

// ---------------------------------------------------------------------------
// gRPC

export interface StreamOutcome {
  /** The final status code, or undefined when the stream hung (no status within the guard). */
  code: grpc.status | undefined;
  details: string;
  events: number;
  hung: boolean;
}

/**
 * Consumes a server stream of a client WITHOUT a deadline and reports how it ended. The guard is
 * this harness's own timer: when it fires, the stream is cancelled and reported as hung.
 */
export async function streamOutcome(stream: grpc.ClientReadableStream<unknown>, guardMs = 5_000): Promise<StreamOutcome> {
  let events = 0;
  return new Promise<StreamOutcome>((resolve) => {
    let settled = false;
    const settle = (o: StreamOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const timer = setTimeout(() => {
      settle({ code: undefined, details: '', events, hung: true });
      stream.cancel();
    }, guardMs);
    stream.on('data', () => events++);
    stream.on('error', (err: grpc.ServiceError) => settle({ code: err.code, details: err.details ?? err.message, events, hung: false }));
    stream.on('status', (s: grpc.StatusObject) => {
      // OK arrives as a status without an error event.
      if (s.code === 0) settle({ code: 0, details: s.details, events, hung: false });
    });
  });
}

/** The rejection of a unary gRPC call (fails when it resolves). */
export async function grpcFailure(p: Promise<unknown>): Promise<grpc.ServiceError> {
  return p.then(
    (v) => {
      throw new Error(`expected the call to fail, it returned ${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x))}`);
    },
    (err: grpc.ServiceError) => err,
  );
}

/** A path of `bytes` characters: `a/a/a/…` under `prefix`. */
export const longPath = (bytes: number, prefix = 'outputs/') =>
  prefix + 'a/'.repeat(Math.ceil((bytes - prefix.length) / 2)).slice(0, Math.max(0, bytes - prefix.length));

/**
 * A request whose path is sent exactly as given (fetch would resolve `..`, `%2e%2e` and
 * backslashes before sending). Resolves with status -1 when the server closes the connection
 * without an answer.
 */
export async function rawRequest(
  url: string,
  key: string,
  method: string,
  rawPath: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path: rawPath,
        headers: { ...(key ? { 'x-api-key': key } : {}), ...opts.headers },
        timeout: opts.timeoutMs ?? 20_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: body, headers: res.headers }));
        res.on('error', () => resolve({ status: res.statusCode ?? -1, text: body, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 20_000} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') resolve({ status: -1, text: `connection closed by the server (${err.code})`, headers: {} });
      else reject(err);
    });
    req.end(opts.body);
  });
}

/**
 * A few ordinary runs, so that the first-use costs of a fresh process (module loading, JIT, SQLite
 * statements, the first graph) are paid before any attack is timed. Not an attack: nothing is asserted.
 */
export async function warmUp(url: string, key: string, rounds = 3): Promise<void> {
  await exclusive(() => warmUpRounds(url, key, rounds));
}

async function warmUpRounds(url: string, key: string, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const thread = await newThread(url, key);
    await runWait(url, key, thread, [
      {
        tool_calls: [
          { name: 'write_file', args: { file_path: 'outputs/warm.txt', content: 'warm' } },
          { name: 'now', args: {} },
        ],
      },
      {
        tool_calls: [
          { name: 'read_file', args: { file_path: 'outputs/warm.txt' } },
          { name: 'list_workspace_files', args: {} },
          { name: 'find_files', args: { pattern: '*.txt' } },
        ],
      },
      { content: 'warm' },
    ]);
    const runs = await call(url, key, 'GET', `/threads/${thread}/runs`);
    const runId = (runs.json as Array<{ run_id: string }> | undefined)?.[0]?.run_id;
    if (runId) await call(url, key, 'GET', `/threads/${thread}/runs/${runId}/stream`);
  }
}
