import type { FastifyInstance } from 'fastify';

/** Version reported by GET /info. */
export const GATEWAY_VERSION = '0.1.0';

/** Liveness and capability discovery. `/ok` needs no API key. */
export function registerMetaRoutes(app: FastifyInstance): void {
  app.get('/ok', async () => ({ ok: true }));

  app.get('/info', async () => ({
    version: GATEWAY_VERSION,
    server: 'agentloop-gateway',
    flags: { assistants: true, crons: false, langsmith: false },
    host: { kind: 'self-hosted' },
  }));
}
