import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PathRedactor, pathRootVariants, processPathRoots, type PathRoot } from '@agentloop/core';
import type { McpServerEntry } from './config.js';

/** The folder the broker runs from (the repo or the image's /app): services/mcp-broker/{src,dist}/ → ../../.. */
const APP_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A folder that may be redacted: absolute and not the file system root. */
const redactable = (p: string | undefined): p is string => p !== undefined && path.isAbsolute(p) && path.resolve(p) !== path.parse(path.resolve(p)).root;

/**
 * What the broker's own error text (failed starts with the server's stderr tail, spawn errors,
 * crashes) shows instead of host paths before it reaches the model: a stdio server's working
 * directory and the folder of an absolute `command` as `<mcp:<id>>`, the folder of mcp_servers.yaml
 * as `<mcp-config>`, the folder the broker runs from (and the cwd) as `<app>`, the OS temp folder
 * `<tmp>`, the home folder `~` (npx caches live there). Tool results are the server's answer and are
 * left alone.
 */
export function mcpPathRedactor(servers: Readonly<Record<string, McpServerEntry>>, configPath: string | undefined): PathRedactor {
  const roots: PathRoot[] = [];
  for (const [id, entry] of Object.entries(servers)) {
    if (redactable(entry.cwd)) roots.push(...pathRootVariants(entry.cwd, `<mcp:${id}>`));
    const commandDir = entry.command && path.isAbsolute(entry.command) ? path.dirname(entry.command) : undefined;
    if (redactable(commandDir)) roots.push(...pathRootVariants(commandDir, `<mcp:${id}>`));
  }
  roots.push(...pathRootVariants(APP_ROOT, '<app>'), ...processPathRoots());
  const configDir = configPath === undefined ? undefined : path.dirname(path.resolve(configPath));
  if (redactable(configDir)) roots.push(...pathRootVariants(configDir, '<mcp-config>'));
  return new PathRedactor(roots);
}
