/** Child processes of the bench: spawn with output to a log file, readiness, RSS, clean stop. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { openSync, closeSync, readFileSync, readdirSync } from 'node:fs';

export interface Spawned {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | string | null>;
  /** SIGTERM to its process group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Spawns `cmd` in its own process group (so a server it forks is stopped with it), stdout and
 * stderr appended to `logFile` (not piped: the bench process spends no CPU on the child's logs).
 */
export function spawnLogged(cmd: string, args: string[], opts: SpawnOptions & { logFile: string; ipc?: boolean }): Spawned {
  const fd = openSync(opts.logFile, 'a');
  const child = spawn(cmd, args, { ...opts, detached: true, stdio: ['ignore', fd, fd, ...(opts.ipc ? (['ipc'] as const) : [])] });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${cmd}`);
  live.add(pid);
  const exited = once(child, 'exit').then(([code, signal]) => {
    live.delete(pid);
    return (code ?? signal) as number | string | null;
  });
  let stopping: Promise<void> | undefined;
  return {
    child,
    pid,
    exited,
    stop(graceMs = 15_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        signalGroup(pid, 'SIGTERM');
        const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
        // Whatever it left behind in its group (a forked server that ignored the parent's exit).
        signalGroup(pid, 'SIGKILL');
      })();
      return stopping;
    },
  };
}

/** Process groups started here and not yet exited: killed if the bench itself exits early. */
const live = new Set<number>();
process.on('exit', () => {
  for (const pid of live) signalGroup(pid, 'SIGKILL');
});

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Polls `url` until it answers 2xx; fails early when `exited` settles first. */
export async function waitHttpOk(url: string, exited: Promise<unknown>, timeoutMs: number, what: string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(url).catch(() => undefined);
    if (res?.ok) return;
    if (gone) throw new Error(`${what} exited before it answered ${url}`);
    if (Date.now() > deadline) throw new Error(`${what} did not answer ${url} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Resident set size of a process in bytes (Linux /proc), 0 when it is gone. */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** `pid` and all its descendants (Linux /proc). */
export function processTree(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...; comm may hold spaces and parentheses: split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // exited meanwhile
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p);
  return out;
}

/** Total CPU time (user + system) a process has used, in ms (Linux /proc). */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * CPU time of a process's main thread alone (its tid is its pid), in ms: for a node process, its
 * JavaScript; the rest of `cpuMs` is V8's platform threads (GC, compiler) and libuv's pool.
 */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(file: string): number {
  try {
    const stat = readFileSync(file, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after comm: state(0) ppid(1) ... utime(11) stime(12), in clock ticks (100/s on Linux)
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}
