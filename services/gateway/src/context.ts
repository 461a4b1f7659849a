import type { Logger } from '@agentloop/core';
import type { Store } from '@agentloop/store';
import type { WorkspaceManager } from '@agentloop/workspace';
import type { GatewayConfig } from './config.js';
import type { RunService } from './run-service.js';
import type { SkillsConfig } from './skills-config.js';
import type { ThreadCheckpoints } from './checkpoints.js';

/** What route modules share. */
export interface RouteContext {
  store: Store;
  runs: RunService;
  config: GatewayConfig;
  logger: Logger;
  /** Thread workspaces on the shared WORKSPACE_ROOT volume. */
  workspaces: WorkspaceManager;
  skills: SkillsConfig;
  /** Replaces host paths in text bound for a client (redaction.ts): error details, run errors. */
  redact: (text: string) => string;
  /** The thread checkpoints (history, state at a checkpoint), when the deployment gives the gateway a saver. */
  checkpoints?: ThreadCheckpoints;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** What the gRPC API shares with the HTTP routes (set by createGatewayApp). */
    agentloop: import('./grpc.js').GrpcContext;
  }
  interface FastifyRequest {
    /** The tenant the request's API key maps to ("default" when auth is off). */
    tenantId: string;
    /** Id of the request's API key (`key_` + 12 hex digits of its SHA-256); "" when auth is off. */
    apiKeyId?: string;
    /** An operator key (AGENTLOOP_ADMIN_KEYS): the ops console's reads cover every tenant (issue 16). */
    isAdmin?: boolean;
  }
}
