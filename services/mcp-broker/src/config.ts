import { access, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, envInt, errorMessage, parseConfig } from '@agentloop/core';
import { McpOAuthEntry, McpRootEntry, McpSamplingEntry } from './client-config.js';

/** The example shipped with the package (every server disabled: a fresh install starts nothing). */
export const DEFAULT_MCP_CONFIG_PATH = fileURLToPath(new URL('../config/mcp_servers.yaml', import.meta.url));

/** Tool names a model provider accepts (OpenAI and Anthropic share this rule). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export const McpBrokerEnv = z.object({
  NATS_URL: z.string().optional(),
  /** Cluster mode: the store holding tenants' OAuth tokens (servers with `oauth: {flow: authorization_code}`). */
  MYSQL_URL: z.string().min(1).optional(),
  LOG_LEVEL: z.string().default('info'),
  /** mcp_servers.yaml (seed 001 §6.4); default: config/mcp_servers.yaml of this package. */
  MCP_CONFIG: z.string().min(1).optional(),
  /** Largest tool result handed to the model, in bytes of UTF-8 text. */
  MCP_MAX_RESULT_BYTES: envInt(100 * 1024, 1024, 16 * 1024 * 1024),
  /** Default per-call timeout (a server may set `timeout_ms`); the request deadline shortens it. */
  MCP_CALL_TIMEOUT_MS: envInt(60_000, 100, 3_600_000),
  /**
   * Longest a call may run while the server keeps reporting progress (each notification resets
   * the call's timeout), when the caller set no deadline of its own.
   */
  MCP_CALL_MAX_MS: envInt(600_000, 100, 86_400_000),
  /** Default connect + initialize + tools/list timeout (a server may set `start_timeout_ms`). */
  MCP_START_TIMEOUT_MS: envInt(30_000, 100, 600_000),
  /** Stop a server unused for this long (a server may set `idle_timeout_ms`); 0: never. */
  MCP_IDLE_TIMEOUT_MS: envInt(0, 0, 86_400_000),
  /** Root of the `<tenant>/<thread>/` workspaces (the tool-runner's volume): images, audio and blobs are saved to their outputs/mcp/. */
  WORKSPACE_ROOT: z.string().min(1).default('./data/workspaces'),
  /** Largest image, audio or blob saved from one result part, in bytes (a bigger one is reported, not saved). */
  MCP_MAX_MEDIA_BYTES: envInt(20 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  /**
   * Images and audio passed back with one result for a vision/audio model, decoded bytes in all
   * (0: none). The reply crosses NATS in one message (max_payload 1 MiB by default), so the default
   * leaves room for the text; raise both together.
   */
  MCP_MAX_RESULT_MEDIA_BYTES: envInt(768 * 1024, 0, 64 * 1024 * 1024),
});
export type McpBrokerEnv = z.infer<typeof McpBrokerEnv>;
/** The broker's environment configuration (parsed once at boot). */
export type McpBrokerConfig = McpBrokerEnv;

export function loadMcpBrokerConfig(env: NodeJS.ProcessEnv = process.env): McpBrokerConfig {
  return parseConfig(McpBrokerEnv, env);
}

const nameRule = (what: string) => z.string().regex(TOOL_NAME_PATTERN, `${what} must be 1-64 characters of a-z A-Z 0-9 _ -`);

export const McpToolEntry = z
  .object({
    /** false: never offered, never callable. */
    enabled: z.boolean().default(true),
    /** Offered to every run; otherwise only when @mentioned (by exposed name or server id). */
    always_available: z.boolean().default(false),
    /** Exposed name instead of `<server>_<tool>`. */
    alias: nameRule('alias').optional(),
    /** Replaces the server's description of the tool. */
    description: z.string().min(1).optional(),
    /**
     * Overrides the server's idempotentHint/readOnlyHint: the operator vouches that running the tool
     * again has no further effect (an MCP call that needs the user's input is then retried with the
     * answer, docs/mcp-client-features.md "Elicitation").
     */
    idempotent: z.boolean().optional(),
  })
  .strict();
export type McpToolEntry = z.infer<typeof McpToolEntry>;

export const McpServerEntry = z
  .object({
    enabled: z.boolean().default(true),
    connection_mode: z.enum(['stdio', 'sse', 'http']).default('stdio'),
    /** stdio: the program to spawn (looked up on PATH), its arguments and working directory. */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    cwd: z.string().min(1).optional(),
    /** stdio: the server's whole environment besides PATH; `${VAR}` / `${VAR:-default}` come from the broker's. */
    env: z.record(z.string(), z.string()).default({}),
    /** sse / http: the endpoint and extra request headers (`${VAR}` expanded, e.g. a bearer token). */
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'url must be http(s)')
      .optional(),
    headers: z.record(z.string(), z.string()).default({}),
    /** Per-call timeout (default MCP_CALL_TIMEOUT_MS). */
    timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
    /**
     * Calls to this server at once (tools annotated read-only are not counted): 1 serializes a
     * turn's parallel calls, which servers that keep state need (call-lanes.ts).
     */
    max_concurrent_calls: z.number().int().min(1).max(1000).default(1),
    /** Connect + initialize + tools/list timeout (default MCP_START_TIMEOUT_MS). */
    start_timeout_ms: z.number().int().min(100).max(600_000).optional(),
    /** Stop the server after this long without use (default MCP_IDLE_TIMEOUT_MS; 0: never). */
    idle_timeout_ms: z.number().int().min(0).max(86_400_000).optional(),
    /** Tenants that may see and call this server's tools (default: every tenant). */
    tenants: z.array(z.string().min(1)).optional(),
    /**
     * Another server's id: when this one is unavailable (does not start, is in its restart
     * backoff, cannot be reached), a call goes to the fallback's tool of the same MCP name.
     */
    fallback: nameRule('fallback').optional(),
    /** Offer every tool of the server to every run (per-tool `always_available` does it for one tool). */
    always_available: z.boolean().default(false),
    /** Per-tool settings; tools the server has but that are not listed here are offered on @mention. */
    tools: z.record(z.string(), McpToolEntry).default({}),
    /** MCP client features (client-config.ts): `roots/list` answer, sampling, OAuth. */
    roots: z.array(McpRootEntry).default([]),
    sampling: McpSamplingEntry.optional(),
    oauth: McpOAuthEntry.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.connection_mode === 'stdio' && !s.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'a stdio server needs a command' });
    if (s.oauth && s.connection_mode === 'stdio') ctx.addIssue({ code: 'custom', path: ['oauth'], message: 'oauth applies to sse and http servers only' });
    if (s.connection_mode !== 'stdio' && !s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: `an ${s.connection_mode} server needs a url` });
  });
export type McpServerEntry = z.infer<typeof McpServerEntry>;

export const McpFile = z
  .object({
    global: z
      .object({ lazy_startup: z.boolean().default(true) })
      .strict()
      .nullish()
      .transform((g) => ({ lazy_startup: g?.lazy_startup ?? true })),
    servers: z
      .record(nameRule('a server id'), McpServerEntry)
      .nullish()
      .transform((v) => v ?? {}),
  })
  .strict()
  .superRefine((f, ctx) => {
    // An alias names one tool: two tools under one name would make a call ambiguous.
    const seen = new Map<string, string>();
    for (const [id, server] of Object.entries(f.servers)) {
      for (const [tool, t] of Object.entries(server.tools)) {
        if (!t.alias) continue;
        const where = `servers.${id}.tools.${tool}.alias`;
        const first = seen.get(t.alias);
        if (first) ctx.addIssue({ code: 'custom', path: ['servers', id, 'tools', tool, 'alias'], message: `alias "${t.alias}" is also used by ${first}` });
        else seen.set(t.alias, where);
      }
    }
    // A fallback names an enabled server, and following fallbacks never comes back to where it started.
    for (const [id, server] of Object.entries(f.servers)) {
      if (!server.fallback) continue;
      const path = ['servers', id, 'fallback'];
      const target = f.servers[server.fallback];
      if (!target) ctx.addIssue({ code: 'custom', path, message: `fallback "${server.fallback}" is not a configured server` });
      else if (!target.enabled) ctx.addIssue({ code: 'custom', path, message: `fallback "${server.fallback}" is disabled` });
      const chain = [id];
      for (let next: string | undefined = server.fallback; next !== undefined; next = f.servers[next]?.fallback) {
        if (chain.includes(next)) {
          ctx.addIssue({ code: 'custom', path, message: `fallbacks form a cycle: ${[...chain, next].join(' → ')}` });
          break;
        }
        chain.push(next);
      }
    }
  });
export type McpFile = z.infer<typeof McpFile>;

/** Thrown when a `${VAR}` reference names a variable the broker's environment does not set. */
export class MissingVariableError extends ConfigError {
  override name = 'MissingVariableError';
  constructor(
    readonly variable: string,
    where: string,
  ) {
    super(`environment variable ${variable} (used in ${where}) is not set`);
  }
}

/**
 * Expands `${VAR}` (and `${VAR:-default}`) from the broker's environment, so secrets stay out of
 * the file. A reference to an unset variable without a default is an error naming it and `where`.
 */
export function expandVars(text: string, env: NodeJS.ProcessEnv = process.env, where = 'mcp_servers.yaml'): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value === '') return '';
    throw new MissingVariableError(name, where);
  });
}

/** Parses and validates mcp_servers.yaml text; a mistake is a ConfigError naming the file and the key path. */
export function parseMcpFile(text: string, source = 'mcp_servers.yaml'): McpFile {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError(`${source} is not valid YAML: ${errorMessage(err)}`);
  }
  const parsed = McpFile.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`${source} is invalid:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * Reads the MCP configuration: `path` (MCP_CONFIG) must exist; without it the package's default
 * file is read, and when even that is absent (a trimmed image) no server is configured.
 */
export async function loadMcpFile(path: string | undefined): Promise<McpFile> {
  const file = path ?? DEFAULT_MCP_CONFIG_PATH;
  if (
    path === undefined &&
    !(await access(file).then(
      () => true,
      () => false,
    ))
  )
    return parseMcpFile('', file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`MCP_CONFIG: cannot read ${file}: ${errorMessage(err)}`);
  }
  return parseMcpFile(text, file);
}
