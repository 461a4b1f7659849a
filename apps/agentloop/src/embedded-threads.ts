import { availableParallelism } from 'node:os';
import { ConfigError } from '@agentloop/core';
import { cgroupCpuLimit } from './cpu-quota.js';

/** The most orchestrator threads EMBEDDED_THREADS may ask for: each holds its own copy of every run-executing service. */
export const MAX_ORCHESTRATOR_THREADS = 16;

/**
 * The most orchestrator threads `auto` starts. Measured on 2 cores only (bench/throughput/README.md,
 * "Orchestrator threads on a quiet machine"): there two threads beside the main thread did 0 to 50%
 * more runs/s than one thread doing everything, and finished a CPU-bound backlog 35% sooner. Each thread is one more V8 isolate (~1.4 s of module loading at
 * start, tens of MiB), and the main thread (HTTP, gateway, event log) does about a quarter of a
 * run's work, so it stops being worth it at a few threads; 4 bounds what was not measured.
 */
export const AUTO_MAX_ORCHESTRATOR_THREADS = 4;

/**
 * EMBEDDED_THREADS, as the number of orchestrator threads (0: everything in the main thread):
 * - unset, empty or `auto`: one per core, up to AUTO_MAX_ORCHESTRATOR_THREADS; none on one core,
 *   where a second event loop only adds port crossings. Cores are those the process may use: a
 *   cgroup CPU quota (a container's CPU limit) bounds them (usableCores). The default since the
 *   checkpoint and queue connections stopped sleeping in SQLite's busy handler: on 2 cores, in one
 *   bench run alternating both configurations, two threads did +34% runs/s at 4 and 32 clients,
 *   a 27% lower p50 at 4, the same p50 at 1 (+0.2 ms), and finished 2,000 in-flight runs in 22 s
 *   instead of 33 s at +4% CPU; they cost +18–24% CPU per `runs.wait` run and +40% RSS
 *   (bench/throughput/README.md "Orchestrator threads by default", README "Configuration");
 * - `none`: 0 — one thread does everything (the least memory);
 * - `orchestrator`: 1; `orchestrator:N`: N (1–16).
 */
export function embeddedThreads(env: NodeJS.ProcessEnv, cores: number = usableCores()): number {
  const v = (env.EMBEDDED_THREADS ?? '').trim();
  if (v === 'none') return 0;
  if (v === '' || v === 'auto') return cores >= 2 ? Math.min(cores, AUTO_MAX_ORCHESTRATOR_THREADS) : 0;
  if (v === 'orchestrator') return 1;
  const n = /^orchestrator:(\d+)$/.exec(v)?.[1];
  if (n !== undefined && Number(n) >= 1 && Number(n) <= MAX_ORCHESTRATOR_THREADS) return Number(n);
  throw new ConfigError(`EMBEDDED_THREADS must be "auto", "none", "orchestrator" or "orchestrator:N" with N from 1 to ${MAX_ORCHESTRATOR_THREADS}, not "${v}"`);
}

/**
 * The cores this process can keep busy: the CPUs it may be scheduled on, bounded by its cgroup's CPU
 * quota rounded down (a container limited to 1.5 CPUs keeps one thread busy, not two; at least 1).
 */
export function usableCores(parallelism: number = availableParallelism(), quota: number | undefined = cgroupCpuLimit()): number {
  return quota === undefined ? parallelism : Math.max(1, Math.min(parallelism, Math.floor(quota)));
}
