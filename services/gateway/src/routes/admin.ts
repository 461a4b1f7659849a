import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requestClusterReload, type Bus } from '@agentloop/bus';
import { UnavailableError } from '@agentloop/core';
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
}
