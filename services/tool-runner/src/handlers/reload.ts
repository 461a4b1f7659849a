import { reloadBroadcast, type Bus, type EventHandler, type MethodImpl, type ServiceShape } from '@agentloop/bus';
import type { Logger } from '@agentloop/core';
import {
  create,
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
 * ReloadTools (`agentloop.tools.reload`, queue group: one replica answers) and the broadcast
 * (`agentloop.tools.reload.broadcast`) that makes every other replica reload too (libs/bus
 * reload-broadcast.ts). `method` reloads this replica and replies with its counts.
 */
export function toolReloads({ loader, bus, logger, replica, broadcastSubject }: ReloadHandlerDeps): {
  method: MethodImpl<ServiceShape<typeof ToolRunner>, 'reloadTools'>;
  broadcastHandler: EventHandler;
} {
  const broadcast = reloadBroadcast({
    bus,
    logger,
    replica,
    subject: broadcastSubject,
    schema: ReloadToolsRequestSchema,
    reload: (reason) => loader.reload(reason),
  });
  return {
    method: async (req) => {
      const reason = req.reason || 'reload request';
      await broadcast.announce(reason);
      return reloadResponse(await loader.reload(reason), replica);
    },
    broadcastHandler: broadcast.handler,
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
