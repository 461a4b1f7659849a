import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A temporary folder removed on dispose (tests, benchmarks). */
export interface TempDir extends AsyncDisposable {
  path: string;
}

export async function createTempDir(prefix = 'agentloop-'): Promise<TempDir> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { path: dir, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}
