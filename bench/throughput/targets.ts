/**
 * The systems under test, each started as its own process(es):
 *  - embedded: AgentLoop in one process (embedded-child.ts → startEmbedded), SQLite, in-memory bus/queue;
 *  - embedded-single, embedded-orchestrator: the same with `EMBEDDED_THREADS=none` (one thread does
 *    everything) and `EMBEDDED_THREADS=orchestrator` (one orchestrator thread beside the main thread;
 *    the default is one per core up to 4), whatever `--env` says, so that one run alternates the
 *    configurations round by round (on this VM the speed of the same code moves by up to 1.7x
 *    between minutes: issue 9, bench/throughput/README.md, so two configurations compare only
 *    within one run);
 *  - cluster:  every AgentLoop service its own process over nats-server, redis-server and mariadbd;
 *  - peer:     `langgraph dev` (in-memory) serving peer-graph/graph.ts.
 * AgentLoop runs from its TypeScript sources (tsx, `@agentloop/source`), as bench:checkpoint does.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startMariaDb, startNats, startRedis, type DevServer } from '@agentloop/devservers';
// The supervisor module alone: the package's index would load all of AgentLoop into the load generator.
import { SERVICES } from '../../apps/agentloop/src/supervisor.js';
import { startPeer } from './peer.js';
import { processTree, spawnLogged, waitHttpOk, type Spawned } from './proc.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '../..');
export const TARGET_NAMES = ['embedded', 'embedded-single', 'embedded-orchestrator', 'cluster', 'peer'] as const;
/** The targets a run starts when `--only` does not say. */
export const DEFAULT_TARGET_NAMES: readonly TargetName[] = ['embedded', 'cluster', 'peer'];
export type TargetName = (typeof TARGET_NAMES)[number];

export interface Target {
  name: TargetName;
  url: string;
  /** Node processes of the target (RSS is summed over these). */
  nodePids(): number[];
  /** Every process of the target, servers included (CPU is summed over these). */
  allPids(): number[];
  /** The embedded child, for profile requests over IPC. */
  proc?: Spawned;
  /** The embedded child's DATA_DIR (its SQLite files), removed at stop. */
  dataDir?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  outDir: string;
  /** Added to every AgentLoop process's environment (`--env K=V`). */
  env: NodeJS.ProcessEnv;
  peerJobsPerWorker: number;
  log: (s: string) => void;
  /** Where AgentLoop's code runs from: this repository, or a snapshot of a commit (snapshot.ts). */
  agentloopRoot: string;
}

/** What AgentLoop gets besides `--env`: loopback webhooks allowed for the bench's receiver, scripted model on. */
function agentLoopEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    ALLOW_SCRIPTED_MODEL: 'true',
    WEBHOOK_ALLOW: '127.0.0.0/8',
    ...extra,
  };
}

/** From TypeScript sources, as the e2e tests and `serviceCommand(name, true)` run services. */
const tsxArgs = ['--conditions=@agentloop/source', '--import', 'tsx'];

/** embedded-child.ts inside `root` (copied there when root is a snapshot), so it imports that root's AgentLoop. */
function embeddedChild(root: string): string {
  const file = path.join(root, 'bench', 'throughput', 'embedded-child.ts');
  if (path.resolve(root) !== REPO_ROOT) {
    mkdirSync(path.dirname(file), { recursive: true });
    copyFileSync(path.join(here, 'embedded-child.ts'), file);
  }
  if (!existsSync(file)) throw new Error(`missing ${file}`);
  return file;
}

/** The embedded targets: `embedded` as configured (by default `EMBEDDED_THREADS=auto`), the others with a fixed thread count. */
export type EmbeddedTargetName = 'embedded' | 'embedded-single' | 'embedded-orchestrator';
export const isEmbeddedTarget = (name: TargetName): name is EmbeddedTargetName => name.startsWith('embedded');

/** The environment variables a target sets over `--env`: `embedded-single` is `embedded` without orchestrator threads, `embedded-orchestrator` with one. */
export function targetEnv(name: TargetName): NodeJS.ProcessEnv {
  if (name === 'embedded-single') return { EMBEDDED_THREADS: 'none' };
  if (name === 'embedded-orchestrator') return { EMBEDDED_THREADS: 'orchestrator' };
  return {};
}

export async function startEmbeddedTarget(opts: StartOptions, tag = 'embedded', name: EmbeddedTargetName = 'embedded'): Promise<Target> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-bench-'));
  const proc = spawnLogged(process.execPath, [...tsxArgs, embeddedChild(opts.agentloopRoot)], {
    cwd: opts.agentloopRoot,
    logFile: path.join(opts.outDir, `${tag}.log`),
    ipc: true,
    env: agentLoopEnv({ DATA_DIR: dataDir, ...opts.env, ...targetEnv(name) }),
  });
  const url = await new Promise<string>((resolve, reject) => {
    proc.child.on('message', (m: { type?: string; url?: string }) => {
      if (m?.type === 'ready' && m.url) resolve(m.url);
    });
    void proc.exited.then((code) => reject(new Error(`AgentLoop embedded exited (${code}) before it was ready; see ${path.join(opts.outDir, `${tag}.log`)}`)));
  });
  return {
    name,
    url,
    proc,
    dataDir,
    nodePids: () => [proc.pid],
    allPids: () => [proc.pid],
    stop: once(async () => {
      // A clean close (the orchestrator drains, SQLite is closed); SIGTERM does the same.
      if (proc.child.connected) proc.child.send({ type: 'stop' });
      await proc.stop(20_000);
      rmSync(dataDir, { recursive: true, force: true });
    }),
  };
}

export async function startClusterTarget(opts: StartOptions, tag = 'cluster'): Promise<Target> {
  const servers: DevServer[] = [];
  const procs: Spawned[] = [];
  const workspaceRoot = mkdtempSync(path.join(tmpdir(), 'agentloop-bench-ws-'));
  const stop = once(async () => {
    await Promise.all(procs.map((p) => p.stop(20_000)));
    await Promise.allSettled(servers.map((s) => s.stop()));
    rmSync(workspaceRoot, { recursive: true, force: true });
  });
  try {
    const before = new Set(processTree(process.pid));
    servers.push(...(await Promise.all([startNats({ jetstream: true }), startRedis(), startMariaDb()])));
    // The servers' own processes (children of this one started just now), for CPU accounting.
    const serverPids = processTree(process.pid).filter((p) => !before.has(p) && /^(nats-server|redis-server|mariadbd)$/.test(comm(p)));
    const [nats, redis, mysql] = servers as [DevServer, DevServer, DevServer];
    const port = await freePort();
    const env = agentLoopEnv({
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      MYSQL_URL: mysql.url,
      WORKSPACE_ROOT: workspaceRoot,
      PORT: String(port),
      GRPC_PORT: String(await freePort()),
      ...opts.env,
    });
    const logs: Record<string, string> = {};
    for (const name of SERVICES) {
      logs[name] = path.join(opts.outDir, `${tag}-${name}.log`);
      const main = path.join(opts.agentloopRoot, 'services', name, 'src', 'main.ts');
      procs.push(spawnLogged(process.execPath, [...tsxArgs, main], { cwd: opts.agentloopRoot, logFile: logs[name], env: { ...env, SERVICE_INSTANCE: '1' } }));
    }
    const url = `http://127.0.0.1:${port}`;
    const anyExit = Promise.race(procs.map((p) => p.exited));
    await waitHttpOk(`${url}/ok`, anyExit, 180_000, 'AgentLoop cluster');
    // Ready when every worker says so (the gateway answering /ok says nothing about the orchestrator).
    const ready: Record<string, RegExp> = {
      orchestrator: /orchestrator started/,
      'tool-runner': /tool-runner serving/,
      approval: /approval serving/,
      'skill-sandbox': /skill-sandbox serving/,
      'mcp-broker': /mcp-broker serving/,
      indexer: /indexer serving/,
    };
    const deadline = Date.now() + 180_000;
    for (const [name, re] of Object.entries(ready)) {
      while (!re.test(readLog(logs[name]!))) {
        if (Date.now() > deadline) throw new Error(`cluster ${name} did not log ${re} within 180 s; see ${logs[name]}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    return {
      name: 'cluster',
      url,
      nodePids: () => procs.map((p) => p.pid),
      allPids: () => [...procs.map((p) => p.pid), ...serverPids],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export async function startPeerTarget(opts: StartOptions): Promise<Target> {
  const peer = await startPeer({ logFile: path.join(opts.outDir, 'peer.log'), jobsPerWorker: opts.peerJobsPerWorker });
  return {
    name: 'peer',
    url: peer.url,
    nodePids: () => processTree(peer.proc.pid),
    allPids: () => processTree(peer.proc.pid),
    stop: once(() => peer.proc.stop(10_000)),
  };
}

export function startTarget(name: TargetName, opts: StartOptions): Promise<Target> {
  switch (name) {
    case 'embedded':
      return startEmbeddedTarget(opts);
    case 'embedded-single':
    case 'embedded-orchestrator':
      return startEmbeddedTarget(opts, name, name);
    case 'cluster':
      return startClusterTarget(opts);
    case 'peer':
      return startPeerTarget(opts);
  }
}

/** `fn` run at most once; later calls get the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}
