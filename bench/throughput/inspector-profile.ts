/**
 * A V8 CPU profile of part of this process, through the inspector (the sampler behind
 * `node --cpu-prof`), so that it covers the measured runs only — not start-up, module loading or
 * warm-up. For `profile-summary.ts FILE --runs N`.
 */
import { writeFileSync } from 'node:fs';
import type { HeapProfiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';

/** Starts sampling every `intervalUs`; the returned function stops and writes the profile to `file`. */
export async function startProfile(file: string, intervalUs = 250): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/**
 * V8's sampling heap profiler over part of this process, counting every sampled allocation, also
 * of objects that died since (`includeObjectsCollectedBy…GC`): what a run allocates, which is what
 * the scavenger has to sweep, not only what it keeps. For `alloc-summary.ts FILE --runs N`.
 */
export async function startAllocationProfile(file: string, intervalBytes = 16 * 1024): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as HeapProfiler.StartSamplingParameterType); // the two flags are V8's, newer than @types/node's type
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}
