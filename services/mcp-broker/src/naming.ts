import type { ResourceToolKind } from './resource-tools.js';
import { createHash } from 'node:crypto';
import type { McpServerEntry, McpToolEntry } from './config.js';

/** A tool as an MCP server lists it (the fields the broker uses). */
export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { title?: string; idempotentHint?: boolean; readOnlyHint?: boolean };
  execution?: { taskSupport?: string };
}

/** One offered tool: which server and MCP tool an exposed name stands for. */
export interface CatalogTool {
  /** The name the model sees and calls. */
  name: string;
  server: string;
  tool: McpTool;
  config: McpToolEntry | undefined;
  /** Listed for every run (server-wide or per tool); otherwise on @mention only. */
  alwaysAvailable: boolean;
  /** From the MCP annotations: calling it again has no additional effect. */
  idempotent: boolean;
  /** A broker built-in over the server's resources (resource-tools.ts), not one of its tools. */
  builtin?: ResourceToolKind;
}

export interface NameCollision {
  /** The name two or more tools wanted. */
  name: string;
  /** `server/tool` of each claimant, sorted. */
  claimants: string[];
  /** What each claimant got, in the same order (`name` itself for an alias, which always wins). */
  resolved: string[];
}

export interface Catalog {
  tools: CatalogTool[];
  byName: ReadonlyMap<string, CatalogTool>;
  collisions: NameCollision[];
}

const MAX = 64;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** `text` with every character outside [a-zA-Z0-9_-] replaced by `_`. */
export function sanitizeName(text: string): string {
  return text.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** The stem every generated name of a server starts with (`<server>_`). */
export function serverPrefix(server: string): string {
  return `${sanitizeName(server)}_`;
}

/** `text` cut to leave room for `_<hash of key>`, so the result stays unique and within 64 characters. */
function withHash(text: string, key: string): string {
  return `${text.slice(0, MAX - 9)}_${shortHash(key)}`;
}

/**
 * The name a tool would get on its own: its alias, else `<server>_<tool>` with invalid characters
 * replaced by `_`; a name longer than 64 characters is cut and suffixed with a hash of
 * `server/tool` (so two long names sharing a prefix stay distinct).
 */
export function baseName(server: string, tool: string, entry: Pick<McpServerEntry, 'tools'>): string {
  const alias = entry.tools[tool]?.alias;
  if (alias) return alias;
  const name = sanitizeName(`${server}_${tool}`);
  return name.length <= MAX ? name : withHash(name, `${server}/${tool}`);
}

/**
 * The offered tools of the servers whose tool lists are known, with unique names. Disabled tools
 * are left out. When names collide (aliases are unique by configuration, but `a` + `b_c` and
 * `a_b` + `c` both give `a_b_c`, and sanitizing can merge names), an alias keeps its name and every
 * generated claimant gets `<name>_<hash of server/tool>` instead — the same result whatever the
 * order in which servers started, and never a name silently moved from one tool to another.
 */
export function buildCatalog(servers: Readonly<Record<string, McpServerEntry>>, listed: ReadonlyMap<string, readonly McpTool[]>): Catalog {
  const claims = new Map<string, Array<{ server: string; tool: McpTool; alias: boolean }>>();
  for (const server of Object.keys(servers).sort()) {
    const entry = servers[server]!;
    const tools = listed.get(server);
    if (!tools) continue;
    for (const tool of [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const cfg = entry.tools[tool.name];
      if (cfg?.enabled === false) continue;
      // callTool cannot run a tool that requires the (experimental) task API.
      if (tool.execution?.taskSupport === 'required') continue;
      const name = baseName(server, tool.name, entry);
      const list = claims.get(name) ?? [];
      list.push({ server, tool, alias: Boolean(cfg?.alias) });
      claims.set(name, list);
    }
  }

  const tools: CatalogTool[] = [];
  const byName = new Map<string, CatalogTool>();
  const collisions: NameCollision[] = [];
  const add = (name: string, c: { server: string; tool: McpTool }) => {
    const entry = servers[c.server]!;
    const cfg = entry.tools[c.tool.name];
    const t: CatalogTool = {
      name,
      server: c.server,
      tool: c.tool,
      config: cfg,
      alwaysAvailable: entry.always_available || cfg?.always_available === true,
      idempotent: cfg?.idempotent ?? (c.tool.annotations?.idempotentHint === true || c.tool.annotations?.readOnlyHint === true),
    };
    tools.push(t);
    byName.set(name, t);
  };
  for (const [name, list] of claims) {
    if (list.length === 1) {
      add(name, list[0]!);
      continue;
    }
    const resolved = list.map((c) => (c.alias ? name : withHash(name, `${c.server}/${c.tool.name}`)));
    collisions.push({ name, claimants: list.map((c) => `${c.server}/${c.tool.name}`), resolved });
    list.forEach((c, i) => add(resolved[i]!, c));
  }
  // A hashed name equal to another tool's name is astronomically unlikely; the later one wins the
  // map but both stay in `tools` — keep `tools` consistent with the map instead.
  const unique = tools.filter((t) => byName.get(t.name) === t);
  unique.sort((a, b) => (a.server === b.server ? (a.name < b.name ? -1 : 1) : a.server < b.server ? -1 : 1));
  return { tools: unique, byName, collisions };
}

/**
 * Servers whose tools could be called `name` (by alias, or by the `<server>_` prefix of generated
 * names): the ones to start when a call names a tool whose server has not listed its tools yet.
 */
export function candidateServers(servers: Readonly<Record<string, McpServerEntry>>, name: string): string[] {
  const out: string[] = [];
  for (const [id, entry] of Object.entries(servers)) {
    if (Object.values(entry.tools).some((t) => t.alias === name) || name.startsWith(serverPrefix(id))) out.push(id);
  }
  return out.sort();
}

/** The disabled tool `name` would stand for, if any (to say "disabled" rather than "unknown"). */
export function disabledToolNamed(servers: Readonly<Record<string, McpServerEntry>>, name: string): { server: string; tool: string } | undefined {
  for (const [id, entry] of Object.entries(servers)) {
    for (const [tool, t] of Object.entries(entry.tools)) {
      if (t.enabled === false && baseName(id, tool, entry) === name) return { server: id, tool };
    }
  }
  return undefined;
}
