import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, envInt, errorMessage, parseConfig } from '@agentloop/core';

export const DEFAULT_MCP_CONFIG_PATH = fileURLToPath(new URL('../config/mcp_servers.yaml', import.meta.url));

export const McpBrokerEnv = z.object({
  NATS_URL: z.string().optional(),
  LOG_LEVEL: z.string().default('info'),
  /** mcp_servers.yaml (seed 001 §6.4); default: config/mcp_servers.yaml of this package (every server disabled). */
  MCP_CONFIG: z.string().min(1).optional(),
  /** Largest tool result passed to the model, in bytes of text. */
  MCP_MAX_RESULT_BYTES: envInt(100 * 1024, 1024, 16 * 1024 * 1024),
  /** Default per-call and startup timeouts (a server may set its own `timeout_ms`). */
  MCP_CALL_TIMEOUT_MS: envInt(60_000, 100, 3_600_000),
  MCP_START_TIMEOUT_MS: envInt(30_000, 100, 600_000),
});
export type McpBrokerConfig = z.infer<typeof McpBrokerEnv>;

export function loadMcpBrokerConfig(env: NodeJS.ProcessEnv = process.env): McpBrokerConfig {
  return parseConfig(McpBrokerEnv, env);
}

const ToolEntry = z
  .object({
    enabled: z.boolean().default(true),
    always_available: z.boolean().default(false),
    alias: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'alias must be 1-64 characters of a-z A-Z 0-9 _ -').optional(),
    description: z.string().optional(),
  })
  .strict();

const ServerEntry = z
  .object({
    enabled: z.boolean().default(true),
    connection_mode: z.enum(['stdio', 'sse', 'http']).default('stdio'),
    command: z.string().optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    url: z.string().url().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    /** Per-call timeout (default MCP_CALL_TIMEOUT_MS). */
    timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
    /** Connect + initialize + tools/list timeout (default MCP_START_TIMEOUT_MS). */
    start_timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
    /** Tenants that may use this server (default: all). */
    tenants: z.array(z.string()).optional(),
    /** Tools not listed here are offered on @mention only; listed ones per their settings. */
    tools: z.record(z.string(), ToolEntry).default({}),
    /** Offer every tool of the server to every run (not only on @mention). */
    always_available: z.boolean().default(false),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.connection_mode === 'stdio' && !s.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'a stdio server needs a command' });
    if (s.connection_mode !== 'stdio' && !s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: `an ${s.connection_mode} server needs a url` });
  });
export type McpServerEntry = z.infer<typeof ServerEntry>;

const McpFile = z
  .object({
    global: z.object({ lazy_startup: z.boolean().default(true) }).strict().default({ lazy_startup: true }),
    servers: z.record(z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'server ids are 1-64 characters of a-z A-Z 0-9 _ -'), ServerEntry).nullish().transform((v) => v ?? {}),
  })
  .strict();
export type McpFile = z.infer<typeof McpFile>;

/** `${VAR}` in env values and headers, from the broker's environment (secrets stay out of the file). */
export function expandVars(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(/\$\{([A-Z0-9_]+)\}/gi, (_m, name: string) => env[name] ?? '');
}

export function parseMcpFile(text: string, source = 'mcp_servers.yaml'): McpFile {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError(`${source} is not valid YAML: ${errorMessage(err)}`);
  }
  const parsed = McpFile.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${source} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export async function loadMcpFile(path: string | undefined): Promise<McpFile> {
  const file = path ?? DEFAULT_MCP_CONFIG_PATH;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`MCP_CONFIG: cannot read ${file}: ${errorMessage(err)}`);
  }
  return parseMcpFile(text, file);
}
