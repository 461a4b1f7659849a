import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceManager } from '@agentloop/workspace';

/** The reply a tool gave, kept so the same call is answered, not run, again. */
export interface ReplayReply {
  content: string;
  error: { code: string; message: string; retryable: boolean } | undefined;
  durationMs: number;
  idempotent: boolean;
}

export type ReplayEntry =
  { state: 'started'; key: string; tool: string; at: number } | ({ state: 'completed'; key: string; tool: string; at: number } & ReplayReply);

const DIR = path.join('.agentloop', 'effects');

/**
 * Tool calls by the caller's idempotency key (`<run id>:<tool call id>`), kept
 * in the thread's workspace (a shared volume in a cluster, so every replica
 * sees them). `begin` creates the entry exclusively before the tool runs, so a
 * call is started at most once; `complete` records its reply.
 *
 * After a crash the orchestrator asks (`agentloop-replay-only`) what became of
 * a call it had sent: no entry means the call never reached a tool-runner and
 * may be sent now; `completed` gives the reply back; `started` means it is
 * running or its tool-runner died mid-way — then the orchestrator's
 * idempotency rule decides.
 */
export class ReplayLog {
  constructor(private readonly workspaces: WorkspaceManager) {}

  /** `runId`: the run of the call, should this create the workspace (WorkspaceManager.ensure). */
  private async file(tenantId: string, threadId: string, key: string, runId = ''): Promise<string> {
    const ws = await this.workspaces.ensure(tenantId, threadId, { runId });
    return path.join(ws.root, DIR, `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  async get(tenantId: string, threadId: string, key: string): Promise<ReplayEntry | undefined> {
    try {
      const entry = JSON.parse(await readFile(await this.file(tenantId, threadId, key), 'utf8')) as ReplayEntry;
      return entry.key === key ? entry : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Creates the `started` entry; when one exists already, returns it instead (the call must not run again). */
  async begin(tenantId: string, threadId: string, key: string, tool: string, runId = ''): Promise<ReplayEntry | undefined> {
    const file = await this.file(tenantId, threadId, key, runId);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await writeFile(file, JSON.stringify({ state: 'started', key, tool, at: Date.now() } satisfies ReplayEntry), { flag: 'wx' });
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A half-written entry of a concurrent begin reads as started.
      return (await this.get(tenantId, threadId, key).catch(() => undefined)) ?? { state: 'started', key, tool, at: Date.now() };
    }
  }

  async complete(tenantId: string, threadId: string, key: string, tool: string, reply: ReplayReply): Promise<void> {
    const file = await this.file(tenantId, threadId, key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, JSON.stringify({ state: 'completed', key, tool, at: Date.now(), ...reply } satisfies ReplayEntry));
    await rename(tmp, file);
  }
}
