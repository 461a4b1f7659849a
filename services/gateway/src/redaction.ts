import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PathRedactor, pathRootVariants, processPathRoots, type PathRoot } from '@agentloop/core';
import type { GatewayConfig } from './config.js';

/** The folder the gateway runs from (the repo or the image's /app): services/gateway/{src,dist}/ → ../../.. */
const APP_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A folder's parent, unless that is the file system root (which is never redacted). */
const parentOf = (p: string): string | undefined => {
  const parent = path.dirname(path.resolve(p));
  return parent === path.parse(parent).root ? undefined : parent;
};

/**
 * The last line of defence against host paths in error text: every error message the HTTP error
 * handler or the gRPC status mapping sends is passed through this. Known roots become names —
 * WORKSPACE_ROOT `<workspace-root>`, the data dir holding it (and the SQLite file) `<data>`, the
 * folder the gateway runs from `<app>` (the shipped skills/ are there), the cwd `<app>`, the OS temp
 * folder `<tmp>`, the home folder `~` — plus any roots the embedder adds (e.g. SKILLS_ROOT → `skills`).
 * Services redact their own text first (workspace-relative paths, `skills/<id>/…`); this catches
 * what a service missed.
 */
export function gatewayPathRedactor(config: GatewayConfig, extra: readonly PathRoot[] = []): PathRedactor {
  // For a folder known under two names the first wins: the app folder and the process's own
  // folders before the data dir guesses (WORKSPACE_ROOT=./workspaces makes the cwd its parent).
  const roots: PathRoot[] = [
    ...extra,
    ...pathRootVariants(config.WORKSPACE_ROOT, '<workspace-root>'),
    ...pathRootVariants(APP_ROOT, '<app>'),
    ...processPathRoots(),
  ];
  const dataDir = parentOf(config.WORKSPACE_ROOT);
  if (dataDir) roots.push(...pathRootVariants(dataDir, '<data>'));
  const sqliteDir = config.SQLITE_PATH === ':memory:' ? undefined : parentOf(config.SQLITE_PATH);
  if (sqliteDir) roots.push(...pathRootVariants(sqliteDir, '<data>'));
  return new PathRedactor(roots);
}
