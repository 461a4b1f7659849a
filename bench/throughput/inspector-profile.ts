/**
 * A V8 CPU profile of part of this process, through the inspector (the sampler behind
 * `node --cpu-prof`), so that it covers the measured runs only — not start-up, module loading or
 * warm-up. For `profile-summary.ts FILE --runs N`.
 */
import { writeFileSync } from 'node:fs';
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
