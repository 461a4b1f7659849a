import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@agentloop/core';
import { WorkspacePermissionError } from './errors.js';
import { inspectWorkspacePath, type InspectOptions, type PathInspection } from './inspect.js';
import { WORKSPACE_DIRS, errnoCode, resolveWorkspacePath, type ResolveOptions, type ResolvedPath } from './paths.js';
import { recordStartsOfRunsWaiting } from './run-outputs.js';
import { validateWorkspaceId } from './workspace-ids.js';

export { WORKSPACE_ID_PATTERN, validateWorkspaceId } from './workspace-ids.js';

/**
 * Contents of `<workspace>/.metadata.json` (seed 001 §1.1), written once when the workspace is
 * created, for people and scripts looking at the folder. Nothing in AgentLoop reads it back: it is
 * inside the workspace, where a sandboxed script can rewrite or replace it, so its tenant and thread
 * are claims, never the owner (that is the folder's place, `<root>/<tenant>/<thread>`).
 */
export interface WorkspaceMetadata {
  thread_id: string;
  tenant_id: string;
  created_at: string;
}

/** One thread's workspace. `root` is a real absolute path: never show it to a model. */
export class Workspace {
  constructor(
    readonly root: string,
    readonly tenantId: string,
    readonly threadId: string,
    private readonly readOnlyRoots: readonly string[],
    private readonly hostRoots: readonly string[],
    /**
     * The thread's private folder (WorkspaceManager.privateDir), not created: where AgentLoop keeps
     * the thread's records that its workspace's users must not be able to forge (run start records).
     */
    readonly privateDir: string,
  ) {}

  /** Resolves a model-supplied path under this workspace's rules (see resolveWorkspacePath). */
  resolve(input: string, opts: Omit<ResolveOptions, 'readOnlyRoots'>): Promise<ResolvedPath> {
    return resolveWorkspacePath(this.root, input, { ...opts, readOnlyRoots: this.readOnlyRoots });
  }

  /** Where a write of `input` would land, without the write rules (see inspectWorkspacePath). */
  inspect(input: string, opts: InspectOptions = {}): Promise<PathInspection> {
    return inspectWorkspacePath(this.root, input, opts);
  }

  /** Workspace-relative POSIX form of an absolute path inside the workspace. */
  relativeOf(absolute: string): string {
    const rel = path.relative(this.root, absolute);
    return rel === '' ? '.' : rel.split(path.sep).join('/');
  }

  /** Replaces absolute host paths in a message (e.g. a Node error) with workspace-relative ones. */
  redact(text: string): string {
    let out = text.split(`${this.root}${path.sep}`).join('').split(this.root).join('.');
    for (const r of this.hostRoots) out = out.split(r).join('<workspace-root>');
    for (const r of this.readOnlyRoots) out = out.split(r).join('<skills>');
    return out;
  }
}

export interface EnsureOptions {
  /** The run a creation is on behalf of (see WorkspaceManager.ensure); '' or absent: none. */
  runId?: string;
}

export interface WorkspaceManagerOptions {
  /** WORKSPACE_ROOT; created when missing. */
  root: string;
  /** Folders that skills/ symlinks may point into (read-only). Missing folders are ignored. */
  skillRoots?: readonly string[];
  logger: Logger;
  /** How long an ensured workspace is trusted without looking (default ENSURED_TTL_MS; 0: always look). */
  ensuredTtlMs?: number;
}

/**
 * Owns `<root>/<tenant_id>/<thread_id>/` workspaces: creation on first use,
 * deletion with the thread. Safe to share between replicas on one volume:
 * creation is idempotent and `.metadata.json` is written once (O_EXCL).
 */
/**
 * How long a workspace `ensure`d by this process is trusted to still be there without looking.
 * Every tool call ensures its workspace; doing the folder work each time (seven filesystem calls)
 * was most of a trivial tool call's cost (issue 9). Only thread deletion removes a workspace, and a
 * deleted thread takes no more runs; in this process `delete` forgets it at once, and a deletion by
 * another replica is noticed when this time runs out.
 */
export const ENSURED_TTL_MS = 10_000;
/** Workspaces remembered as ensured, at most (the oldest are forgotten first). */
const ENSURED_MAX = 10_000;

/**
 * The folder beside the tenants' folders under the root (`<root>/.agentloop/`) where AgentLoop keeps
 * per-thread state that the workspace's users must not reach: `<root>/.agentloop/<tenant>/<thread>/`
 * (WorkspaceManager.privateDir). Not under any workspace, so never bind-mounted into a sandbox nor
 * reachable by a file tool (their paths are contained in the thread's workspace); on the root's
 * volume, so shared by every replica as the workspaces are. Tenant ids never start with a dot
 * (WORKSPACE_ID_PATTERN), so it is never a tenant's folder. Deleted with the thread (`delete`).
 */
export const PRIVATE_DIR = '.agentloop';

export class WorkspaceManager {
  private ready: Promise<{ root: string; skillRoots: string[] }> | undefined;
  /** `tenant/thread` → when the check expires (see ENSURED_TTL_MS). */
  private readonly ensured = new Map<string, number>();
  /** Host paths of the root (real and as configured), for redaction. */
  private known: string[];

  constructor(private readonly opts: WorkspaceManagerOptions) {
    this.known = [path.resolve(opts.root)];
  }

  /** Creates the root and resolves it (and the skill roots) to real paths. Idempotent. */
  init(): Promise<{ root: string; skillRoots: string[] }> {
    this.ready ??= (async () => {
      const abs = path.resolve(this.opts.root);
      await fs.mkdir(abs, { recursive: true });
      const root = await fs.realpath(abs);
      const skillRoots: string[] = [];
      for (const r of this.opts.skillRoots ?? []) {
        try {
          skillRoots.push(await fs.realpath(path.resolve(r)));
        } catch (err) {
          this.opts.logger.warn({ skills_root: r, err: errnoCode(err) }, 'skills root not found; symlinks into it will be refused');
        }
      }
      this.known = [...new Set([root, abs])];
      return { root, skillRoots };
    })();
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  /**
   * Creates the workspace (and its folders and metadata) when missing; returns it. `opts.runId`:
   * the run on whose behalf (a tool call): should this create the workspace, that run started
   * with it empty, and its start record says so (see recordStartsOfRunsWaiting).
   */
  async ensure(tenantId: string, threadId: string, opts: EnsureOptions = {}): Promise<Workspace> {
    return (await this.ensureCreated(tenantId, threadId, opts)).workspace;
  }

  /**
   * `ensure`, also telling whether this call created the thread's folder: then the workspace held
   * nothing before (no tool can have written into a folder that did not exist), so a run starting
   * in it needs no listing of what was there (issue 9: fewer filesystem calls per run).
   */
  async ensureCreated(tenantId: string, threadId: string, opts: EnsureOptions = {}): Promise<{ workspace: Workspace; created: boolean }> {
    validateWorkspaceId('tenant_id', tenantId);
    validateWorkspaceId('thread_id', threadId);
    const { root, skillRoots } = await this.init();
    const dir = path.join(root, tenantId, threadId);
    const key = `${tenantId}/${threadId}`;
    const now = Date.now();
    if ((this.ensured.get(key) ?? 0) > now) return { workspace: this.workspaceAt(root, tenantId, threadId, skillRoots), created: false };
    // Recursive mkdir returns the first folder it created, undefined when `dir` was there already.
    const created = (await fs.mkdir(dir, { recursive: true })) !== undefined;
    // A tenant or thread folder replaced by a symlink would move the whole workspace elsewhere.
    if ((await fs.realpath(dir)) !== dir) {
      throw new WorkspacePermissionError(`the workspace of thread ${threadId} is not a plain directory`);
    }
    for (const sub of WORKSPACE_DIRS) await fs.mkdir(path.join(dir, sub), { recursive: true });
    const meta: WorkspaceMetadata = { thread_id: threadId, tenant_id: tenantId, created_at: new Date().toISOString() };
    try {
      await fs.writeFile(path.join(dir, '.metadata.json'), `${JSON.stringify(meta, null, 2)}\n`, { flag: 'wx' });
      this.opts.logger.debug({ tenant: tenantId, thread_id: threadId }, 'workspace created');
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
    if (created) {
      // Runs that started before it existed get their (empty) start records now; without them a
      // listing elsewhere would fall back to comparing clocks. Best effort: the tool call goes on.
      await recordStartsOfRunsWaiting({ root: dir, privateDir: path.join(root, PRIVATE_DIR, tenantId, threadId) }, opts.runId).catch((err: unknown) =>
        this.opts.logger.warn({ tenant: tenantId, thread_id: threadId, err: errnoCode(err) ?? String(err) }, 'start records of waiting runs not written'),
      );
    }
    this.ensured.delete(key);
    this.ensured.set(key, now + (this.opts.ensuredTtlMs ?? ENSURED_TTL_MS));
    if (this.ensured.size > ENSURED_MAX) this.ensured.delete(this.ensured.keys().next().value!);
    return { workspace: this.workspaceAt(root, tenantId, threadId, skillRoots), created };
  }

  /**
   * Where a thread's workspace is and whether something is there, without creating it: no look
   * when this process ensured it lately (ENSURED_TTL_MS), else one `lstat`. A run that never
   * touches its workspace then costs no folder work (issue 9). What is there is not checked:
   * `ensure` does that before anything in it is read or written.
   */
  async probe(tenantId: string, threadId: string): Promise<{ root: string; privateDir: string; exists: boolean }> {
    validateWorkspaceId('tenant_id', tenantId);
    validateWorkspaceId('thread_id', threadId);
    const { root } = await this.init();
    const dir = path.join(root, tenantId, threadId);
    const privateDir = path.join(root, PRIVATE_DIR, tenantId, threadId);
    if ((this.ensured.get(`${tenantId}/${threadId}`) ?? 0) > Date.now()) return { root: dir, privateDir, exists: true };
    const st = await fs.lstat(dir).catch((err: unknown) => {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw err;
    });
    return { root: dir, privateDir, exists: st !== undefined };
  }

  /**
   * The workspace of a thread without creating it (nor anything else):
   * `exists` tells whether it is there. A workspace that is there must be a
   * plain directory, as `ensure` requires. Paths resolve against a missing
   * workspace as they would once it is created (nothing exists yet).
   */
  async locate(tenantId: string, threadId: string): Promise<{ workspace: Workspace; exists: boolean }> {
    validateWorkspaceId('tenant_id', tenantId);
    validateWorkspaceId('thread_id', threadId);
    const { root, skillRoots } = await this.init();
    const dir = path.join(root, tenantId, threadId);
    // Ensured lately by this process: trusted as `ensure` trusts it (ENSURED_TTL_MS), no look (issue 9:
    // write_file's path inspection before its approval ran this realpath on every call).
    if ((this.ensured.get(`${tenantId}/${threadId}`) ?? 0) > Date.now()) {
      return { workspace: this.workspaceAt(root, tenantId, threadId, skillRoots), exists: true };
    }
    // The deepest of tenant/ and tenant/thread/ that exists must be where it claims to be.
    for (const p of [dir, path.dirname(dir)]) {
      const real = await fs.realpath(p).catch((err: unknown) => {
        if (errnoCode(err) === 'ENOENT') return undefined;
        throw err;
      });
      if (real === undefined) continue;
      if (real !== p) throw new WorkspacePermissionError(`the workspace of thread ${threadId} is not a plain directory`);
      return { workspace: this.workspaceAt(root, tenantId, threadId, skillRoots), exists: p === dir };
    }
    return { workspace: this.workspaceAt(root, tenantId, threadId, skillRoots), exists: false };
  }

  /**
   * The thread's private folder (see PRIVATE_DIR), not created: state of the thread kept out of
   * reach of its workspace's users (tool-runner's replay log). The ids are checked as `ensure` checks them.
   */
  async privateDir(tenantId: string, threadId: string): Promise<string> {
    validateWorkspaceId('tenant_id', tenantId);
    validateWorkspaceId('thread_id', threadId);
    const { root } = await this.init();
    return path.join(root, PRIVATE_DIR, tenantId, threadId);
  }

  /** `<root>/.agentloop` (see PRIVATE_DIR), not created: for state shared by every thread. */
  async privateRoot(): Promise<string> {
    return path.join((await this.init()).root, PRIVATE_DIR);
  }

  /**
   * Removes a thread's workspace and its private folder (privateDir: the thread's state goes with
   * it). Returns false when there was no workspace.
   */
  async delete(tenantId: string, threadId: string): Promise<boolean> {
    validateWorkspaceId('tenant_id', tenantId);
    validateWorkspaceId('thread_id', threadId);
    const { root } = await this.init();
    const dir = path.join(root, tenantId, threadId);
    this.ensured.delete(`${tenantId}/${threadId}`);
    const privateDir = path.join(root, PRIVATE_DIR, tenantId, threadId);
    // First, and whether or not the workspace is there: a deletion retried after a crash between
    // the two removals finds no workspace, and must still remove this.
    await fs.rm(privateDir, { recursive: true, force: true });
    const st = await fs.lstat(dir).catch(() => undefined);
    if (!st) return false;
    // rm does not follow symlinks: a planted link is removed, not its target.
    await fs.rm(dir, { recursive: true, force: true });
    // And again after: a tool call that landed between the two removals made it anew.
    await fs.rm(privateDir, { recursive: true, force: true });
    this.opts.logger.debug({ tenant: tenantId, thread_id: threadId }, 'workspace deleted');
    return true;
  }

  private workspaceAt(root: string, tenantId: string, threadId: string, skillRoots: readonly string[]): Workspace {
    return new Workspace(path.join(root, tenantId, threadId), tenantId, threadId, skillRoots, this.known, path.join(root, PRIVATE_DIR, tenantId, threadId));
  }

  /** Replaces the host path of the workspace root in a message. */
  redact(text: string): string {
    let out = text;
    for (const r of this.known) out = out.split(r).join('<workspace-root>');
    return out;
  }

  /** Top-level entries of a workspace, "name/" for folders, for diagnostics. */
  async entries(ws: Workspace): Promise<string[]> {
    const items = await fs.readdir(ws.root, { withFileTypes: true });
    return items.map((d) => (d.isDirectory() || d.isSymbolicLink() ? `${d.name}/` : d.name)).sort();
  }
}
