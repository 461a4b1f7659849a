import type { Bus, EventHandler, MethodImpl, ServiceShape } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  ReloadToolsRequestSchema,
  ReloadToolsResponseSchema,
  SkippedToolModuleSchema,
  type ReloadToolsResponse,
  type ToolRunner,
} from '@agentloop/proto';
import type { ReloadResult, ToolLoader } from '../tool-loader.js';

export interface ReloadHandlerDeps {
  loader: ToolLoader;
  bus: Bus;
  logger: Logger;
  /** This replica's id, written into the broadcast so it can ignore its own. */
  replica: string;
  /** Subject every replica subscribes to (no queue group). */
  broadcastSubject: string;
}

/**
 * ReloadTools (`agentloop.tools.reload`, queue group: one replica answers): re-publishes
 * the request on the broadcast subject so every other replica reloads too,
 * reloads this replica and replies with its counts.
 */
export function reloadTools({ loader, bus, logger, replica, broadcastSubject }: ReloadHandlerDeps): MethodImpl<ServiceShape<typeof ToolRunner>, 'reloadTools'> {
  return async (req) => {
    const reason = req.reason || 'reload request';
    try {
      await bus.publish(broadcastSubject, toBinary(ReloadToolsRequestSchema, create(ReloadToolsRequestSchema, { originReplica: replica, reason })));
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'could not broadcast the reload to the other replicas');
    }
    const result = await loader.reload(reason);
    return reloadResponse(result, replica);
  };
}

/** `agentloop.tools.reload.broadcast`: every replica reloads, except the one that published it. */
export function reloadBroadcastHandler({ loader, logger, replica }: Omit<ReloadHandlerDeps, 'bus' | 'broadcastSubject'>): EventHandler {
  return (msg) => {
    let origin = '';
    let reason = 'broadcast';
    try {
      const req = fromBinary(ReloadToolsRequestSchema, msg.data);
      origin = req.originReplica;
      reason = req.reason || reason;
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'malformed reload broadcast; reloading anyway');
    }
    if (origin === replica) return;
    loader.reload(`${reason} (broadcast from ${origin || 'unknown'})`).catch((err: unknown) => logger.error({ err }, 'broadcast reload failed'));
  };
}

export function reloadResponse(result: ReloadResult, replica: string): ReloadToolsResponse {
  return create(ReloadToolsResponseSchema, {
    loaded: result.loaded.length,
    skipped: result.skipped.length,
    skippedModules: result.skipped.map((s) => create(SkippedToolModuleSchema, { source: s.source, reason: s.reason })),
    configError: result.configError ?? '',
    registered: result.registered,
    replica,
  });
}
