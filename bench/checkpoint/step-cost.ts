/**
 * CPU of a LangGraph step's checkpoint writes through MySQLSaver, counted rather than timed: the
 * saver's process and mariadbd (/proc), per step, for a pool with `multipleStatements` (the task's
 * writes, the new channel values and the checkpoint row in one text query, as
 * `MySQLSaver.fromConnString` makes it) and one without (three prepared statements, three round
 * trips), alternated round by round on one server. A step is what LangGraph does with durability
 * "sync": putWrites of the finished task against the current checkpoint, not awaited, then put of
 * the next one, then both awaited. Issue 9, bench/throughput/README.md "Checkpoint writes in one
 * round trip per step".
 *
 *   npx tsx --conditions=@agentloop/source bench/checkpoint/step-cost.ts [--threads 150] [--steps 8] [--rounds 4]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createPool } from 'mysql2/promise';
import { startMariaDb } from '@agentloop/devservers';
import { MySQLSaver } from '@agentloop/checkpoint-mysql';
import { createTestSaver } from '@agentloop/checkpoint-mysql/testing';
import { generateWorkload, type StepData } from './data.js';

const { values: args } = parseArgs({
  options: { threads: { type: 'string', default: '150' }, steps: { type: 'string', default: '8' }, rounds: { type: 'string', default: '4' } },
});
const threads = Number(args.threads);
const steps = Number(args.steps);

const server = await startMariaDb();
const port = new URL(server.url).port;
const serverPid = readdirSync('/proc')
  .filter((p) => /^\d+$/.test(p))
  .find((p) => {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      return cmd.includes('mariadbd') && cmd.includes(`--port=${port}`);
    } catch {
      return false;
    }
  });
if (!serverPid) throw new Error('mariadbd not found');
/** utime + stime of mariadbd in ms (clock ticks of 10 ms). */
const serverCpuMs = (): number => {
  const f = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const db = await createTestSaver(server.url);

async function runSteps(saver: MySQLSaver, prefix: string): Promise<void> {
  const work = generateWorkload({ threads, steps, prefix });
  // Thread-major here: each thread's steps in order, as one run makes them.
  for (const id of work.threads) {
    const list = work.steps.get(id)!;
    let previous: StepData | undefined;
    for (const s of list) {
      const config = { configurable: { thread_id: s.threadId, checkpoint_ns: '', ...(s.parentId ? { checkpoint_id: s.parentId } : {}) } };
      const written = previous ? saver.putWrites(config, previous.writes, previous.taskId) : Promise.resolve();
      await saver.put(config, s.checkpoint, s.metadata, s.newVersions);
      await written;
      previous = s;
    }
  }
}

const rows: string[] = [];
for (let round = 0; round < Number(args.rounds); round++) {
  for (const multipleStatements of round % 2 === 0 ? [true, false] : [false, true]) {
    const pool = createPool({ uri: db.url, connectionLimit: 4, trace: false, multipleStatements, charset: 'utf8mb4', supportBigNumbers: true });
    const saver = new MySQLSaver(pool);
    await runSteps(saver, `warm-${round}-${String(multipleStatements)}`);
    const [c0, s0, t0] = [process.cpuUsage(), serverCpuMs(), performance.now()];
    await runSteps(saver, `r${round}-${String(multipleStatements)}`);
    const c = process.cpuUsage(c0);
    const [s, t] = [serverCpuMs() - s0, performance.now() - t0];
    await saver.end();
    const n = threads * steps;
    rows.push(
      `round ${round + 1}  ${multipleStatements ? 'one round trip per step   ' : 'prepared, 3 round trips   '}  saver ${((c.user + c.system) / 1000 / n).toFixed(3)} ms  mariadbd ${(s / n).toFixed(3)} ms  wall ${(t / n).toFixed(3)} ms  per step`,
    );
    console.log(rows.at(-1));
  }
}
await db.drop();
await server.stop();
