import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, opendir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Workspace, WorkspaceManager } from '@agentloop/workspace';

/** The reply a tool gave, kept so the same call is answered, not run, again. */
export interface ReplayReply {
  content: string;
  error: { code: string; message: string; retryable: boolean } | undefined;
  durationMs: number;
  idempotent: boolean;
}

export type ReplayEntry =
  { state: 'started'; key: string; tool: string; at: number } | ({ state: 'completed'; key: string; tool: string; at: number } & ReplayReply);

/** The log's folder in the thread's private folder (WorkspaceManager.privateDir). */
const DIR = 'effects';
/** Where the log was kept before, inside the thread's workspace: read only to import it (see ReplayLog). */
const LEGACY_DIR = ['.agentloop', 'effects'] as const;
/**
 * How long after the first start of this layout (`<private root>/.replay-log`, its mtime) a workspace's
 * legacy entries are still imported. Calls begun by the earlier version are asked about when their
 * runs resume, within minutes of the upgrade; past this, nothing a workspace's user wrote there is
 * ever taken for a record.
 */
export const LEGACY_IMPORT_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A legacy entry larger than this is imported as `started` (its call may have run; see parseEntry). */
const LEGACY_ENTRY_MAX_BYTES = 16 * 1024 * 1024;
const ENTRY_NAME = /^[0-9a-f]{64}\.json$/;

export interface ReplayLogOptions {
  /** The clock (tests). */
  now?: () => number;
}

/** Where one call's entry is. */
interface Place {
  workspace: Workspace;
  /** Whether this request created the workspace (then it holds no legacy entries). */
  created: boolean;
  dir: string;
  file: string;
}

/**
 * Tool calls by the caller's idempotency key (`<run id>:<tool call id>`), kept in the thread's
 * private folder `<WORKSPACE_ROOT>/.agentloop/<tenant>/<thread>/effects/` (WorkspaceManager.privateDir:
 * on the workspaces' volume, shared by every replica in a cluster; deleted with the thread). Not in
 * the workspace: the skill sandbox mounts that read-write and the file tools reach it, so a script or
 * a prompt-injected model could redirect the log through a symlink, forge a `completed` entry (the call
 * would never run and "return" the forged reply) or delete one (the call would run twice after a crash).
 * `begin` creates the entry exclusively before the tool runs, so a call is started at most once;
 * `complete` records its reply.
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
 *
 * Upgrade from the log in the workspace (`<workspace>/.agentloop/effects/`): a call begun there by
 * the earlier version must not run again when the new one is asked about it. The thread's folder
 * is made once, when first missing, and then holds a copy of every legacy entry: they are copied
 * into a staging folder renamed into place, so the folder never exists without them (a replica
 * that finds it answers as if from the old entries). The legacy tree is read without following a
 * symlink (`.agentloop`, `effects` and each entry opened O_NOFOLLOW, the folders through their
 * descriptors: legacyDir) and never written; only regular files unchanged since this layout's
 * first use are imported (readLegacyEntry: what a script plants later is not). After that the
 * workspace's copy is never read again, and the import only happens within
 * LEGACY_IMPORT_WINDOW_MS of this layout's first use, or not at all when this request created the
 * workspace. A call whose thread's folder exists adds no filesystem call; `get` of a call with no
 * entry adds one lstat (is the folder there?).
 */
export class ReplayLog {
  private since: Promise<number> | undefined;

  constructor(
    private readonly workspaces: WorkspaceManager,
    private readonly opts: ReplayLogOptions = {},
  ) {}

  /**
   * The call's place. `runId`: the run of the call, should this create the workspace
   * (WorkspaceManager.ensure); `created`: whether it did (then the folder is surely missing).
   */
  private async place(tenantId: string, threadId: string, key: string, runId = ''): Promise<Place> {
    const { workspace, created } = await this.workspaces.ensureCreated(tenantId, threadId, { runId });
    const dir = path.join(await this.workspaces.privateDir(tenantId, threadId), DIR);
    return { workspace, created, dir, file: path.join(dir, `${createHash('sha256').update(key).digest('hex')}.json`) };
  }

  async get(tenantId: string, threadId: string, key: string): Promise<ReplayEntry | undefined> {
    const at = await this.place(tenantId, threadId, key);
    let text = await readIfThere(at.file);
    // Only when the thread's folder was missing can a legacy entry be waiting to be imported.
    if (text === undefined && (await this.prepare(at))) text = await readIfThere(at.file);
    return text === undefined ? undefined : parseEntry(text, key);
  }

  /** Creates the `started` entry; when one exists already, returns it instead (the call must not run again). */
  async begin(tenantId: string, threadId: string, key: string, tool: string, runId = ''): Promise<ReplayEntry | undefined> {
    const at = await this.place(tenantId, threadId, key, runId);
    try {
      // A workspace created just now has no folder for the log yet: made at once, not after a failed write.
      if (at.created) await this.prepare(at);
      await this.inFolder(at, () =>
        writeFile(at.file, `${JSON.stringify({ state: 'started', key, tool, at: Date.now() } satisfies ReplayEntry)}\n`, { flag: 'wx' }),
      );
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A half-written entry of a concurrent begin reads as started.
      return (await this.get(tenantId, threadId, key).catch(() => undefined)) ?? { state: 'started', key, tool, at: Date.now() };
    }
  }

  async complete(tenantId: string, threadId: string, key: string, tool: string, reply: ReplayReply): Promise<void> {
    const at = await this.place(tenantId, threadId, key);
    const line = `\n${JSON.stringify({ state: 'completed', key, tool, at: Date.now(), ...reply } satisfies ReplayEntry)}\n`;
    await this.inFolder(at, () => appendNoFollow(at.file, line));
  }

  /** Runs `write`; when the log's folder is missing (ENOENT), makes it (prepare) and runs `write` once more. */
  private async inFolder(at: Place, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await this.prepare(at, true);
      await write();
    }
  }

  /**
   * Makes the thread's folder when missing, with the workspace's legacy entries in it (see
   * ReplayLog). Returns false when it was there already. `missing`: a write into it just failed
   * with ENOENT, so it is known to be missing (no look).
   */
  private async prepare(at: Place, missing = false): Promise<boolean> {
    // A workspace this request created holds no legacy log: no look (its first call's filesystem work stays as it was).
    if (!missing && !at.created && (await isThere(at.dir))) return false;
    // The import window starts at this layout's first use, whether or not a legacy log is found then:
    // otherwise a link or entry planted long after the upgrade would open it (once per process: cached).
    const since = await this.layoutSince();
    const legacy = at.created ? undefined : await this.legacyDir(at.workspace.root, since);
    if (legacy === undefined) {
      await mkdir(at.dir, { recursive: true });
      return true;
    }
    const staging = `${at.dir}.import-${randomUUID()}`;
    try {
      await mkdir(staging, { recursive: true });
      // One entry in memory at a time, however many a long-lived thread (or a script) left there.
      for await (const d of await opendir(legacy.path)) {
        if (!ENTRY_NAME.test(d.name)) continue;
        const text = await readLegacyEntry(path.join(legacy.path, d.name), since);
        if (text !== undefined) await writeFile(path.join(staging, d.name), text, { flag: 'wx' });
      }
      // Atomic: the folder appears with every entry. Another replica's import, or a folder made
      // since, wins (ENOTEMPTY / EEXIST): its copy is the same, or newer.
      await rename(staging, at.dir).catch((err: unknown) => {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      });
    } finally {
      await legacy.close();
      await rm(staging, { recursive: true, force: true });
    }
    return true;
  }

  /**
   * The workspace's legacy log folder, when within the import window: `.agentloop`, then `effects`
   * in it, each opened as a folder without following a link (O_NOFOLLOW), the second through the
   * first's descriptor as openat(2) would, so a link swapped in by a sandboxed script at any moment
   * leads nowhere; the listing and the entries are then read through the folder's descriptor
   * (`/proc/self/fd/N`). Undefined when there is none, or when either is not a plain folder.
   * Where /proc is not mounted (not Linux), the folders are looked at with lstat and read by path.
   */
  private async legacyDir(workspaceRoot: string, since: number): Promise<{ path: string; close: () => Promise<void> } | undefined> {
    const top = path.join(workspaceRoot, LEGACY_DIR[0]);
    // The common case, one lstat: no legacy tree.
    if (!(await lstatIfThere(top))?.isDirectory()) return undefined;
    if ((this.opts.now ?? Date.now)() > since + LEGACY_IMPORT_WINDOW_MS) return undefined;
    if (!(await hasProcFds())) {
      const dir = path.join(top, LEGACY_DIR[1]);
      return (await lstatIfThere(dir))?.isDirectory() ? { path: dir, close: () => Promise.resolve() } : undefined;
    }
    const folder = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
    const topFd = await openIfFolder(top, folder);
    if (!topFd) return undefined;
    try {
      const dirFd = await openIfFolder(`/proc/self/fd/${topFd.fd}/${LEGACY_DIR[1]}`, folder);
      return dirFd ? { path: `/proc/self/fd/${dirFd.fd}`, close: () => dirFd.close() } : undefined;
    } finally {
      await topFd.close();
    }
  }

  /**
   * When this layout was first used (the start of the import window): the modification time of a
   * marker beside the threads' folders, created once (O_EXCL). Its time, not its content, so a crash
   * while writing it cannot leave a marker that fails every later call.
   */
  private layoutSince(): Promise<number> {
    this.since ??= (async () => {
      // A dot first: never a tenant's folder name (WORKSPACE_ID_PATTERN), which share this folder.
      const file = path.join(await this.workspaces.privateRoot(), '.replay-log');
      const made = async (): Promise<number | undefined> => (await lstatIfThere(file))?.mtimeMs;
      const known = await made();
      if (known !== undefined) return known;
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, 'tool-runner replay log: folders by tenant and thread beside this file\n', { flag: 'wx' }).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      });
      return (await made()) ?? (this.opts.now ?? Date.now)();
    })();
    this.since.catch(() => {
      this.since = undefined;
    });
    return this.since;
  }
}

/**
 * One legacy entry's text, or undefined for a file the earlier version cannot have written: it
 * wrote regular files only (a link or anything else is refused: O_NOFOLLOW, and O_NONBLOCK so a
 * FIFO cannot block), and none after this layout's first use `since` (the README's upgrade stops
 * the earlier tool-runners first), so a file whose inode changed after it — ctime, which a
 * workspace's user cannot set — was written by someone else. An entry too large to be one
 * imports as '' — `started` (parseEntry): its call may have begun, so it is not run again.
 */
async function readLegacyEntry(file: string, since: number): Promise<string | undefined> {
  let fh;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (['ENOENT', 'ELOOP', 'ENXIO', 'EISDIR', 'EACCES'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.ctimeMs > since) return undefined;
    if (st.size > LEGACY_ENTRY_MAX_BYTES) return '';
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}

/** `file` opened with `flags` when it is a folder (no link followed with O_NOFOLLOW); undefined when missing or not one. */
async function openIfFolder(file: string, flags: number) {
  try {
    return await open(file, flags);
  } catch (err) {
    if (['ENOENT', 'ELOOP', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
}

let procFds: Promise<boolean> | undefined;
/** Whether this process's descriptors are reachable as /proc/self/fd/N (Linux with /proc mounted). */
function hasProcFds(): Promise<boolean> {
  procFds ??= lstat('/proc/self/fd').then(
    (st) => st.isDirectory(),
    () => false,
  );
  return procFds;
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function lstatIfThere(p: string) {
  try {
    return await lstat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

const isThere = async (p: string): Promise<boolean> => (await lstatIfThere(p)) !== undefined;

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
