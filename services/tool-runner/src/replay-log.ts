import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
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
 *
 * One file per call, one JSON line per state: `begin` creates it (O_EXCL) with the `started`
 * line, `complete` appends the `completed` line (issue 9: one append instead of a temp file and
 * a rename). The last line that parses is the entry. Why an append stays safe on a crash: a line
 * cut short by a crash mid-append does not parse (a JSON object ends with its closing brace), so
 * the entry reads as `started` — what a crash before the old rename gave too, and the answer
 * that makes the orchestrator's idempotency rule decide instead of the call running again.
 * Each appended line starts with a newline, so a line appended after a cut one (a re-execution)
 * stands on its own; and a file of the earlier format (one JSON object, no newline) still reads.
 * A file with no line that parses (a crash inside `begin`'s write) also reads as `started`:
 * its existence says `begin` ran.
 *
 * The folder is not created before each call: the write is tried and, on ENOENT, the folder is
 * made and the write tried again (issue 9: no repeated filesystem work per call). A folder
 * deleted between calls is thus made again when next needed.
 */
export class ReplayLog {
  constructor(private readonly workspaces: WorkspaceManager) {}

  /**
   * The call's file. `runId`: the run of the call, should this create the workspace
   * (WorkspaceManager.ensure); `created`: whether it did (then the folder is surely missing).
   */
  private async file(tenantId: string, threadId: string, key: string, runId = ''): Promise<{ file: string; created: boolean }> {
    const { workspace, created } = await this.workspaces.ensureCreated(tenantId, threadId, { runId });
    return { file: path.join(workspace.root, DIR, `${createHash('sha256').update(key).digest('hex')}.json`), created };
  }

  async get(tenantId: string, threadId: string, key: string): Promise<ReplayEntry | undefined> {
    let text: string;
    try {
      text = await readFile((await this.file(tenantId, threadId, key)).file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return parseEntry(text, key);
  }

  /** Creates the `started` entry; when one exists already, returns it instead (the call must not run again). */
  async begin(tenantId: string, threadId: string, key: string, tool: string, runId = ''): Promise<ReplayEntry | undefined> {
    const { file, created } = await this.file(tenantId, threadId, key, runId);
    try {
      // A workspace created just now has no folder for the log yet: made at once, not after a failed write.
      if (created) await mkdir(path.dirname(file), { recursive: true });
      await inFolder(file, () => writeFile(file, `${JSON.stringify({ state: 'started', key, tool, at: Date.now() } satisfies ReplayEntry)}\n`, { flag: 'wx' }));
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A half-written entry of a concurrent begin reads as started.
      return (await this.get(tenantId, threadId, key).catch(() => undefined)) ?? { state: 'started', key, tool, at: Date.now() };
    }
  }

  async complete(tenantId: string, threadId: string, key: string, tool: string, reply: ReplayReply): Promise<void> {
    const { file } = await this.file(tenantId, threadId, key);
    const line = `\n${JSON.stringify({ state: 'completed', key, tool, at: Date.now(), ...reply } satisfies ReplayEntry)}\n`;
    await inFolder(file, () => appendNoFollow(file, line));
  }
}

/**
 * Appends to `file`, refusing a symlink in its place (ELOOP). The workspace is writable from the
 * skill sandbox, so a script could swap its own call's log file for a link to a file outside the
 * workspace between `begin` and `complete`; the rename this append replaced never followed one.
 */
async function appendNoFollow(file: string, text: string): Promise<void> {
  const fh = await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
}

/** Runs `write`; when the file's folder is missing (ENOENT), creates it and runs `write` once more. */
async function inFolder(file: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(path.dirname(file), { recursive: true });
    await write();
  }
}

/**
 * The entry a replay file holds (see ReplayLog): its last line that parses; `started` when none
 * does; undefined when that line is another key's (a hash collision: not this call's record).
 */
export function parseEntry(text: string, key: string): ReplayEntry | undefined {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let entry: ReplayEntry;
    try {
      entry = JSON.parse(line) as ReplayEntry;
    } catch {
      continue; // cut short by a crash: an earlier line says more
    }
    return entry.key === key ? entry : undefined;
  }
  return { state: 'started', key, tool: '', at: 0 };
}
