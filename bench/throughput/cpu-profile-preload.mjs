/**
 * CPU profile of cluster services under load (`--cpu-prof` is refused in NODE_OPTIONS):
 *   npm run bench:throughput -- --only cluster --workload wait4 --seconds 20 --rounds 1 \
 *     --env NODE_OPTIONS=--import=$PWD/bench/throughput/cpu-profile-preload.mjs \
 *     --env PROF_DIR=/tmp/prof --env PROF_START_S=20 --env PROF_DUR_S=12
 * Each service named in PROF_SERVICES (default orchestrator,gateway,tool-runner) starts V8's
 * sampler (500 µs) PROF_START_S after it starts and writes `<service>-<ms>.cpuprofile` to PROF_DIR
 * PROF_DUR_S later; read it with profile-summary.ts. Pick the times so that the window falls
 * inside the measured round (the bench logs when each phase starts).
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout } from 'node:timers';

const main = process.argv.find((a) => a.includes('/services/')) ?? '';
const service = main.split('/services/')[1]?.split('/')[0];
const wanted = (process.env.PROF_SERVICES ?? 'orchestrator,gateway,tool-runner').split(',');
const dir = process.env.PROF_DIR;
if (service && dir && wanted.includes(service)) {
  const startMs = Number(process.env.PROF_START_S ?? 25) * 1000;
  const durationMs = Number(process.env.PROF_DUR_S ?? 10) * 1000;
  setTimeout(() => {
    const session = new Session();
    session.connect();
    session.post('Profiler.setSamplingInterval', { interval: 500 }, () =>
      session.post('Profiler.enable', () =>
        session.post('Profiler.start', () => {
          setTimeout(
            () =>
              session.post('Profiler.stop', (err, res) => {
                if (err) return;
                mkdirSync(dir, { recursive: true });
                writeFileSync(path.join(dir, `${service}-${Date.now()}.cpuprofile`), JSON.stringify(res.profile));
              }),
            durationMs,
          ).unref();
        }),
      ),
    );
  }, startMs).unref();
}
