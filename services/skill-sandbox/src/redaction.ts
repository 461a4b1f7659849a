import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PathRedactor, pathRootVariants, processPathRoots, type PathRoot } from '@agentloop/core';
import { validateWorkspaceId, type WorkspaceManager } from '@agentloop/workspace';

/** The folder the sandbox runs from (the repo or the image's /app): services/skill-sandbox/{src,dist}/ → ../../.. */
const APP_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface SandboxRedactionOptions {
  /** WORKSPACE_ROOT as configured (it may be relative, or a symlink). */
  workspaceRoot: string;
  /** SKILLS_ROOT (resolved). */
  skillsRoot: string;
  /** SKILLS_CACHE: installed requirements. */
  cacheRoot: string;
  workspaces: WorkspaceManager;
}

/**
 * What the sandbox shows instead of host paths, in everything that leaves it (script stdout and
 * stderr, tracebacks, spawn and dependency errors, every error message): the caller's workspace as
 * relative paths (`uploads/a.csv`, the workspace itself `.`), SKILLS_ROOT as `skills` (so a skill's
 * files read `skills/<id>/scripts/x.py`, the path they have in the workspace), and named roots for
 * the rest — `<workspace-root>` (other workspaces), `<skill-deps>` (SKILLS_CACHE), `<data>` (the
 * folder holding WORKSPACE_ROOT), `<app>` (where the service runs from, and the cwd), `<tmp>` (the
 * OS temp folder, where scripts get their HOME), `~` (the home folder). Each root is matched as
 * configured and as its real path.
 */
export class SandboxRedaction {
  /** Redacts every root except a thread's workspace (for requests that name no thread). */
  readonly base: PathRedactor;

  constructor(private readonly opts: SandboxRedactionOptions) {
    const roots: PathRoot[] = [
      ...pathRootVariants(opts.skillsRoot, 'skills'),
      ...pathRootVariants(opts.workspaceRoot, '<workspace-root>'),
      ...pathRootVariants(opts.cacheRoot, '<skill-deps>'),
      ...pathRootVariants(APP_ROOT, '<app>'),
      ...processPathRoots(),
    ];
    const parent = path.dirname(path.resolve(opts.workspaceRoot));
    if (parent !== path.parse(parent).root) roots.push(...pathRootVariants(parent, '<data>'));
    this.base = new PathRedactor(roots);
  }

  /**
   * The redactor for one thread's request: the base plus its workspace shown as relative paths.
   * An invalid id (the request fails anyway) or a workspace root that cannot be resolved gives the base.
   */
  async forThread(tenantId: string, threadId: string): Promise<PathRedactor> {
    try {
      validateWorkspaceId('tenant_id', tenantId);
      validateWorkspaceId('thread_id', threadId);
      const { root } = await this.opts.workspaces.init();
      return this.base.with([
        { path: path.join(root, tenantId, threadId), label: '' },
        { path: path.join(path.resolve(this.opts.workspaceRoot), tenantId, threadId), label: '' },
      ]);
    } catch {
      return this.base;
    }
  }
}
