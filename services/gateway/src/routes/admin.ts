import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requestClusterReload, requestMcpServerReload, type Bus } from '@agentloop/bus';
import { NotFoundError, UnavailableError } from '@agentloop/core';
import { parseRequest } from '../validation.js';

/** How long `POST /admin/reload` collects answers by default, and at most (`wait_ms`). */
export const RELOAD_WAIT_DEFAULT_MS = 2_000;
export const RELOAD_WAIT_MAX_MS = 30_000;

const ReloadBody = z
  .object({
    /** Why (written to every service's log). */
    reason: z.string().trim().min(1).max(200).optional(),
    /** How long to collect the services' answers: replicas that answer later still reload, unreported. */
    wait_ms: z.number().int().min(100).max(RELOAD_WAIT_MAX_MS).optional(),
  })
  .strict()
  .optional();

/** A server id as mcp_servers.yaml allows it. */
const McpServerParams = z.object({ id: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be an MCP server id (1-64 characters of a-z A-Z 0-9 _ -)') });

/** How long `POST /admin/mcp/servers/{id}/reload` collects answers by default: a restart includes the server's start. */
export const MCP_RELOAD_WAIT_DEFAULT_MS = 10_000;

const McpReloadBody = z
  .object({
    /** How long to collect the replicas' answers (a replica still restarting then is not reported). */
    wait_ms: z.number().int().min(100).max(RELOAD_WAIT_MAX_MS).optional(),
  })
  .strict()
  .optional();

/**
 * The operator API (admin keys only, see admin-auth.ts). `POST /admin/reload` asks every replica of
 * every service to reload what it read from files — tools.yaml and tool modules (tool-runner),
 * skills (skill-sandbox), mcp_servers.yaml (mcp-broker), HITL rules (approval), cached listings
 * (orchestrator) — and answers with each replica's result (libs/bus cluster-reload.ts).
 */
export function registerAdminRoutes(app: FastifyInstance, bus: Bus | undefined): void {
  app.post('/admin/reload', async (request) => {
    const body = parseRequest(ReloadBody, request.body, 'body') ?? {};
    if (!bus) throw new UnavailableError('Cluster reload is not available: this gateway has no bus to the services.');
    const results = await requestClusterReload(bus, { reason: body.reason ?? 'POST /admin/reload', collectMs: body.wait_ms ?? RELOAD_WAIT_DEFAULT_MS });
    request.log.info({ services: results.map((r) => `${r.service}:${r.ok ? 'ok' : 'failed'}`) }, 'cluster reload');
    return { ok: results.length > 0 && results.every((r) => r.ok), services: results };
  });

  // seed 004 `reload_mcp_server`: restart one MCP server on every broker replica (libs/bus mcp-admin.ts).
  app.post('/admin/mcp/servers/:id/reload', async (request) => {
    const { id } = parseRequest(McpServerParams, request.params, 'params');
    const body = parseRequest(McpReloadBody, request.body, 'body') ?? {};
    if (!bus) throw new UnavailableError('MCP server reload is not available: this gateway has no bus to the services.');
    const replicas = await requestMcpServerReload(bus, { server: id, collectMs: body.wait_ms ?? MCP_RELOAD_WAIT_DEFAULT_MS });
    request.log.info({ mcp_server: id, replicas: replicas.map((r) => `${r.instance}:${r.ok ? 'ok' : 'failed'}`) }, 'MCP server reload');
    if (replicas.length === 0) throw new UnavailableError(`No MCP broker answered within the wait: server ${id} was not reported reloaded.`);
    if (replicas.every((r) => r.unknown)) throw new NotFoundError(`MCP server not found: ${id} (not configured, or disabled, in mcp_servers.yaml)`);
    return { server: id, ok: replicas.every((r) => r.ok), replicas };
  });
}
