/**
 * What orchestrator threads cost at start (issue 9: should `EMBEDDED_THREADS=auto` be the default?):
 * for each mode, alternated, a fresh process imports the embedded app, then starts it (timed) on a
 * fresh data dir and reports the start's wall time and CPU (main thread + threads: the process's),
 * the RSS before and after the start, after one warm-up run, and the time to close it.
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/thread-start.ts [--modes none,auto] [--rounds 2]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface Sample {
  mode: string;
  threads: number;
  startMs: number;
  startCpuMs: number;
  rssBeforeMiB: number;
  rssStartedMiB: number;
  rssAfterRunMiB: number;
  closeMs: number;
}

if (process.env.THREAD_START_CHILD) {
  const { startEmbedded } = await import('@agentloop/agentloop-app');
  const { Client } = await import('@langchain/langgraph-sdk');
  const mib = () => Math.round((process.memoryUsage().rss / 2 ** 20) * 10) / 10;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-thread-start-'));
  const rssBeforeMiB = mib();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const server = await startEmbedded({
    port: 0,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ALLOW_SCRIPTED_MODEL: 'true', HOST: '127.0.0.1' },
  });
  const startMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const rssStartedMiB = mib();
  const client = new Client({ apiUrl: server.url, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'hi' }] },
    config: { configurable: { model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'now', args: {} }] }, { content: 'done' }] } } },
  });
  const rssAfterRunMiB = mib();
  const t1 = performance.now();
  await server.close();
  const closeMs = performance.now() - t1;
  rmSync(dataDir, { recursive: true, force: true });
  const sample: Sample = {
    mode: process.env.EMBEDDED_THREADS ?? 'none',
    threads: server.orchestratorThreadIds.length,
    startMs: Math.round(startMs),
    startCpuMs: Math.round((cpu.user + cpu.system) / 1000),
    rssBeforeMiB,
    rssStartedMiB,
    rssAfterRunMiB,
    closeMs: Math.round(closeMs),
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
  process.exit(0);
}

const { values } = parseArgs({ options: { modes: { type: 'string', default: 'none,auto' }, rounds: { type: 'string', default: '2' } } });
const modes = values.modes.split(',');
const samples: Sample[] = [];
for (let r = 0; r < Number(values.rounds); r++)
  for (const mode of modes) {
    const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1]!], {
      env: { ...process.env, THREAD_START_CHILD: '1', EMBEDDED_THREADS: mode },
      encoding: 'utf8',
    });
    const line = out.trim().split('\n').at(-1)!;
    const s = JSON.parse(line) as Sample;
    samples.push(s);
    console.log(JSON.stringify(s));
  }
console.log('\nmode      threads  start ms  start CPU ms  RSS before → started → after a run (MiB)  close ms');
for (const s of samples)
  console.log(
    `${s.mode.padEnd(9)} ${String(s.threads).padStart(7)} ${String(s.startMs).padStart(9)} ${String(s.startCpuMs).padStart(13)}  ${s.rssBeforeMiB} → ${s.rssStartedMiB} → ${s.rssAfterRunMiB}  ${String(s.closeMs).padStart(9)}`,
  );
