import { randomUUID } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { listWorkspaceFiles, type FileListing, type WorkspaceFileEntry } from './listing.js';
import { errnoCode } from './paths.js';
import { WORKSPACE_ID_PATTERN } from './workspace-ids.js';

/**
 * Folder of the thread's private folder (WorkspaceManager.privateDir) holding one start record per
 * run. Not in the workspace: a record there could be rewritten, replaced by a link (to a FIFO, to
 * another tenant's record) or made huge by any sandboxed script or file tool of the thread, and the
 * run's end trusts it to say which files are the run's artifacts.
 */
export const RUN_RECORDS_DIR = 'runs';
/**
 * Where the records were kept before (`<workspace>/.runs/`), where anyone with the workspace could
 * write them: read only by the one-time upgrade (takeLegacyRecord), as untrusted input.
 */
export const LEGACY_RUN_RECORDS_DIR = '.runs';
/**
 * The upgrade reads old records only this long after the new layout's first use (its marker,
 * LAYOUT_MARKER): a run in flight across an upgrade ends within it, and after it no file a
 * workspace's user can write is read at all.
 */
export const LEGACY_IMPORT_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Beside the threads' private folders (a dot first: never a tenant's name); its mtime is when this layout was first used. */
const LAYOUT_MARKER = '.run-records';
/**
 * The largest record read: one the code writes lists at most 100,000 files (~100 bytes each). Read
 * with a bounded buffer, so a file growing between its stat and its read is not read whole.
 */
const RECORD_MAX_BYTES = 16 * 1024 * 1024;
/** Start records older than this are pruned when a new one is written. */
const RECORD_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

interface StartRecord {
  run_id: string;
  created_at: string;
  /** path → [size, mtime ms] of every file that existed at the run's first start. */
  files: Record<string, [number, number]>;
}

/**
 * Where a thread's run records go: `root`, its workspace (what is listed), and `privateDir`, its
 * private folder (where the records are kept). A Workspace, and WorkspaceManager.probe's answer, are both.
 */
export interface RunRecordsPlace {
  root: string;
  privateDir: string;
}

/**
 * Start records this process wrote, by file, until the run's first listing reads it: the end of a
 * run lists its artifacts right after, usually through the same tool-runner, and reading back the
 * file it wrote was a filesystem call per run (issue 9). A record never changes once in place
 * (first writer wins), so the copy is the file; a listing elsewhere, or a second one, reads the
 * file. Bounded: the oldest are dropped (a run that ends on another replica is never listed here).
 * Should the workspace be deleted meanwhile, the listing compares with the run's real start
 * rather than finding no record: the same files, minus any that were there when it started.
 */
const written = new Map<string, StartRecord>();
const WRITTEN_REMEMBERED = 1000;

/**
 * Runs that started while their workspace did not exist, by workspace root → run ids (this
 * process), until the listing at their end. Their start was an empty workspace, so nothing is
 * written for it: a run that never touches its workspace does no folder work at all (issue 9).
 * The note stands in for the start record: the end's listing treats every file as new (and
 * writes the record then, should the workspace have appeared without one), a resumed run records
 * an empty start, and a creation of the workspace in this process writes the records of the runs
 * noted (`recordStartsOfRunsWaiting`), so a listing in another process finds them on disk.
 * Bounded: the oldest workspaces, and a workspace's oldest runs, are forgotten first (a run that
 * never reached its listing).
 */
const startedWithoutWorkspace = new Map<string, Set<string>>();
const WITHOUT_WORKSPACE_REMEMBERED = 10_000;
const RUNS_PER_WORKSPACE_REMEMBERED = 100;

/** Notes that `runId` started while the workspace at `workspaceRoot` did not exist (see above). */
export function noteRunStartWithoutWorkspace(workspaceRoot: string, runId: string): void {
  checkRunId(runId);
  const runs = startedWithoutWorkspace.get(workspaceRoot) ?? new Set<string>();
  startedWithoutWorkspace.delete(workspaceRoot);
  startedWithoutWorkspace.set(workspaceRoot, runs.add(runId));
  if (runs.size > RUNS_PER_WORKSPACE_REMEMBERED) runs.delete(runs.values().next().value!);
  if (startedWithoutWorkspace.size > WITHOUT_WORKSPACE_REMEMBERED) startedWithoutWorkspace.delete(startedWithoutWorkspace.keys().next().value!);
}

/**
 * Drops a run's note: its end found no workspace, so nothing it wrote can be listed later (a
 * resumed run that finds a workspace then records what is there, none of it this run's).
 */
export function forgetRunStartWithoutWorkspace(workspaceRoot: string, runId: string): void {
  const runs = startedWithoutWorkspace.get(workspaceRoot);
  runs?.delete(runId);
  if (runs?.size === 0) startedWithoutWorkspace.delete(workspaceRoot);
}

function startedEmpty(workspaceRoot: string, runId: string): boolean {
  return startedWithoutWorkspace.get(workspaceRoot)?.has(runId) === true;
}

/**
 * Called by whoever just created the workspace at `workspaceRoot`: writes the (empty) start
 * records of the runs noted as started before it existed, and of `creatingRun` (the run whose
 * tool call created it: it started with nothing there), so they are on disk like any other —
 * also for a process that did not see those runs start (a tool-runner restarted meanwhile).
 */
export async function recordStartsOfRunsWaiting(place: RunRecordsPlace, creatingRun?: string): Promise<void> {
  const runs = new Set(startedWithoutWorkspace.get(place.root));
  if (creatingRun) runs.add(creatingRun);
  for (const runId of runs) await recordRunStart(place, runId, [], { emptyWorkspace: true });
}

const isRunId = (runId: string): boolean => WORKSPACE_ID_PATTERN.test(runId) && !runId.includes('..');

function checkRunId(runId: string): void {
  if (!isRunId(runId)) throw new Error(`invalid run id "${runId.slice(0, 140)}"`);
}

function recordPath(place: RunRecordsPlace, runId: string): string {
  checkRunId(runId);
  return path.join(place.privateDir, RUN_RECORDS_DIR, `${runId}.json`);
}

/**
 * Records what `folders` hold when a run first starts in a workspace, so its
 * artifacts can later be told apart without comparing clocks of different
 * machines. Written once per run (O_EXCL): a resumed run keeps its first record.
 * Returns whether this call wrote it.
 *
 * `opts.emptyWorkspace`: the caller has just created the workspace's folder
 * (`WorkspaceManager.ensureCreated`), so the folders hold nothing and are not
 * listed. Runs of one thread never overlap, so no other tool writes there
 * between that creation and this record. A run noted as started without its
 * workspace (`noteRunStartWithoutWorkspace`) also records an empty start.
 */
export async function recordRunStart(
  place: RunRecordsPlace,
  runId: string,
  folders: readonly string[],
  opts: { emptyWorkspace?: boolean } = {},
): Promise<boolean> {
  const file = recordPath(place, runId);
  const dir = path.dirname(file);
  // In the private folder, which no script or file tool reaches: no link can have been planted there.
  const madeDir = (await fs.mkdir(dir, { recursive: true })) !== undefined;
  // The thread's first record in this place (the upgrade): a run that started under the old layout
  // keeps its start from there, read as untrusted input (takeLegacyRecord).
  // Not when the workspace was just created: it holds none.
  let legacy: StartRecord | undefined;
  if (madeDir && opts.emptyWorkspace !== true) {
    legacy = await takeLegacyRecord(place, runId);
  }
  // No look before the write: a run's first start (the common case) would pay for a failing
  // `access`; a resumed run lists the folders for nothing and loses the race for the name below.
  const empty = opts.emptyWorkspace === true || startedEmpty(place.root, runId);
  const { files } = empty || legacy ? { files: [] } : await listWorkspaceFiles(place.root, folders, { maxFiles: 100_000 });
  const record: StartRecord = legacy ?? {
    run_id: runId,
    created_at: new Date().toISOString(),
    files: Object.fromEntries(files.map((f) => [f.path, [f.size, f.modifiedMs]])),
  };
  if (!(await writeRecord(file, record))) return false;
  written.set(file, record);
  if (written.size > WRITTEN_REMEMBERED) written.delete(written.keys().next().value!);
  // A folder created just now holds no old records to prune.
  if (madeDir) notePruned(dir, Date.now());
  else await pruneRecords(dir);
  return true;
}

/**
 * Writes `record` at `file` unless one is there: to a temp name, then linked into place, so readers
 * never see half a record and the first writer wins. False when one was there.
 */
async function writeRecord(file: string, record: StartRecord): Promise<boolean> {
  const temp = `${file}.${randomUUID()}.tmp`;
  await fs.writeFile(temp, JSON.stringify(record), { flag: 'wx' });
  try {
    await fs.link(temp, file);
    return true;
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    return false;
  } finally {
    // unlink, not rm: rm looks at what the path is first, and this is the file just written.
    await fs.unlink(temp).catch(() => undefined);
  }
}

/**
 * A record file read as untrusted input: opened with O_NOFOLLOW and O_NONBLOCK, so neither a link
 * (to another tenant's record, to /dev/zero) nor a FIFO is followed or blocks; only a regular file
 * of at most RECORD_MAX_BYTES (read through a buffer of that size, whatever the file grows to), not
 * changed after `notChangedAfter` (its ctime, which a workspace's user cannot set back), of the shape
 * recordRunStart writes and naming `runId`, is taken. The private folder is out of every
 * workspace, but under SKILL_SCRIPT_ISOLATION=namespaces or none a script reaches it too.
 */
async function readRecord(file: string, runId: string, notChangedAfter = Infinity): Promise<StartRecord | undefined> {
  const fh = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: unknown) => {
    if (['ENOENT', 'ELOOP', 'ENXIO', 'EISDIR', 'EACCES', 'ENOTDIR'].includes(errnoCode(err) ?? '')) return undefined;
    throw err;
  });
  if (!fh) return undefined;
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > RECORD_MAX_BYTES || st.ctimeMs > notChangedAfter) return undefined;
    const buf = Buffer.alloc(Math.min(st.size, RECORD_MAX_BYTES) + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead > RECORD_MAX_BYTES) return undefined;
    const record = startRecordOf(JSON.parse(buf.toString('utf8', 0, bytesRead)));
    return record?.run_id === runId ? record : undefined;
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  } finally {
    await fh.close();
  }
}

/** When the new layout was first used, by private root: the marker's mtime (written once, O_EXCL). */
const layoutSince = new Map<string, Promise<number>>();

function layoutFirstUsed(privateRoot: string): Promise<number> {
  let since = layoutSince.get(privateRoot);
  if (!since) {
    const marker = path.join(privateRoot, LAYOUT_MARKER);
    since = (async () => {
      const known = (await fs.lstat(marker).catch(() => undefined))?.mtimeMs;
      if (known !== undefined) return known;
      await fs.mkdir(privateRoot, { recursive: true });
      await fs.writeFile(marker, 'run start records: runs/ in each thread folder beside this file\n', { flag: 'wx' }).catch((err: unknown) => {
        if (errnoCode(err) !== 'EEXIST') throw err;
      });
      return (await fs.lstat(marker)).mtimeMs;
    })();
    since.catch(() => layoutSince.delete(privateRoot));
    layoutSince.set(privateRoot, since);
  }
  return since;
}

/**
 * The upgrade from records kept in the workspace, at the thread's first record in the new place:
 * `runId`'s record from `<workspace>/.runs/`, when it is one the earlier version wrote — within
 * LEGACY_IMPORT_WINDOW_MS of the new layout's first use, and not changed since (readRecord; so a
 * record a script plants after the upgrade is never read). `.runs/` is opened as a folder without
 * following a link and the record read through its descriptor (`/proc/self/fd/N`, as openat
 * would), so a link swapped in at any moment leads nowhere. Only that one record is read (runs of a
 * thread never overlap, so it is the one run that can be in flight), and it is then removed;
 * nothing else is: `.runs` was never a reserved name, so the folder may hold the user's own files.
 * Undefined where /proc is not mounted (the run records its start from the workspace as it is).
 */
async function takeLegacyRecord(place: RunRecordsPlace, runId: string): Promise<StartRecord | undefined> {
  // <root>/.agentloop/<tenant>/<thread> (WorkspaceManager.privateDir): the marker lives in <root>/.agentloop.
  // Made at the first record of any thread, whether or not it has old records, so that a `.runs`
  // folder made later (by a script) cannot be older than the layout's first use. Once per process.
  const since = await layoutFirstUsed(path.resolve(place.privateDir, '..', '..'));
  if (Date.now() > since + LEGACY_IMPORT_WINDOW_MS) return undefined;
  const legacy = path.join(place.root, LEGACY_RUN_RECORDS_DIR);
  // The common case, one lstat: no old records.
  if (!(await fs.lstat(legacy).catch(() => undefined))?.isDirectory()) return undefined;
  const dir = await fs.open(legacy, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!dir) return undefined;
  try {
    const file = `/proc/self/fd/${dir.fd}/${runId}.json`;
    if (!(await fs.stat(`/proc/self/fd/${dir.fd}`).catch(() => undefined))) return undefined;
    const record = await readRecord(file, runId, since);
    if (record) {
      await fs.unlink(file).catch(() => undefined);
      // Fails (ignored) unless what is there now is an empty folder: rmdir never removes a link.
      await fs.rmdir(legacy).catch(() => undefined);
    }
    return record;
  } finally {
    await dir.close();
  }
}

/**
 * Records folders pruned lately, by path → when. Pruning lists every record of the thread, so on
 * every run start a long thread would pay O(its runs of the last 30 days); once an hour per
 * folder (per process) keeps the folder bounded at the same cost per run whatever its length.
 */
const lastPruned = new Map<string, number>();
const PRUNE_EVERY_MS = 60 * 60 * 1000;
const PRUNED_REMEMBERED = 10_000;

function notePruned(dir: string, now: number): void {
  lastPruned.delete(dir);
  lastPruned.set(dir, now);
  if (lastPruned.size > PRUNED_REMEMBERED) lastPruned.delete(lastPruned.keys().next().value!);
}

async function pruneRecords(dir: string): Promise<void> {
  const now = Date.now();
  if ((lastPruned.get(dir) ?? -Infinity) > now - PRUNE_EVERY_MS) return;
  notePruned(dir, now);
  const cutoff = now - RECORD_MAX_AGE_MS;
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    const p = path.join(dir, name);
    const st = await fs.lstat(p).catch(() => undefined);
    if (st && st.mtimeMs < cutoff) await fs.rm(p, { force: true }).catch(() => undefined);
  }
}

/** The start of a run noted as started without its workspace: no files. */
const EMPTY_START: StartRecord = { run_id: '', created_at: '', files: {} };

/**
 * Files of `folders` that are new or changed (size or mtime) since the run's
 * start record, or undefined when the run has no record (nor a note that it
 * started without its workspace). A missing workspace lists no files.
 */
export async function filesChangedSinceRunStart(
  place: RunRecordsPlace,
  runId: string,
  folders: readonly string[],
  opts: { maxFiles?: number } = {},
): Promise<FileListing | undefined> {
  const file = recordPath(place, runId);
  const workspaceRoot = place.root;
  let record = written.get(file);
  if (startedEmpty(workspaceRoot, runId)) {
    // Created during the run by something that wrote no start record (an upload, a skill's script
    // in another process): written now, so a resumed run and any later listing compare with the
    // same empty start once the note is gone. Best effort: this listing is exact either way.
    if (record === undefined && (await fs.lstat(workspaceRoot).catch(() => undefined))?.isDirectory()) {
      await recordRunStart(place, runId, [], { emptyWorkspace: true }).catch(() => false);
    }
    forgetRunStartWithoutWorkspace(workspaceRoot, runId);
    record = EMPTY_START;
  }
  written.delete(file);
  record ??= await readRecord(file, runId);
  // None, or not one this code wrote (a damaged or planted file): the caller compares times.
  if (record === undefined) return undefined;
  const before = record.files;
  const maxFiles = opts.maxFiles ?? 1000;
  const { files } = await listWorkspaceFiles(workspaceRoot, folders, { maxFiles: 100_000 });
  const changed: WorkspaceFileEntry[] = files.filter((f) => {
    const was = Object.hasOwn(before, f.path) ? before[f.path] : undefined;
    return was === undefined || was[0] !== f.size || was[1] !== f.modifiedMs;
  });
  return { files: changed.slice(0, maxFiles), truncated: changed.length > maxFiles };
}

/** A parsed record when it has the shape recordRunStart writes, else undefined. */
function startRecordOf(v: unknown): StartRecord | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const files = (v as { files?: unknown }).files;
  if (typeof files !== 'object' || files === null || Array.isArray(files)) return undefined;
  for (const entry of Object.values(files)) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'number' || typeof entry[1] !== 'number') return undefined;
  }
  return v as StartRecord;
}
