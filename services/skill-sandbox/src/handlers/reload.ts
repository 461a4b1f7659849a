import { reloadBroadcast, type Bus, type EventHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { create, ReloadSkillsRequestSchema, ReloadSkillsResponseSchema, SkippedSkillSchema, type ReloadSkillsResponse } from '@agentloop/proto';
import type { ReloadResult } from '../catalog.js';
import type { SkillsMethod } from './common.js';

export interface ReloadHandlerDeps {
  reload: (reason: string) => Promise<ReloadResult>;
  bus: Bus;
  logger: Logger;
  /** This replica's id, written into the broadcast so it can ignore its own. */
  replica: string;
  /** Subject every replica subscribes to (no queue group). */
  broadcastSubject: string;
}

/**
 * ReloadSkills (`agentloop.skills.reload`, queue group: one replica answers) and the broadcast
 * (`agentloop.skills.reload.broadcast`) that makes every other replica reload too (libs/bus
 * reload-broadcast.ts). `method` reloads this replica and replies with the result; a failed
 * reload is replied as `config_error`.
 */
export function skillReloads({ reload, bus, logger, replica, broadcastSubject }: ReloadHandlerDeps): {
  method: SkillsMethod<'reloadSkills'>;
  broadcastHandler: EventHandler;
} {
  const broadcast = reloadBroadcast({ bus, logger, replica, subject: broadcastSubject, schema: ReloadSkillsRequestSchema, reload });
  return {
    method: async (req) => {
      const reason = req.reason || 'reload request';
      await broadcast.announce(reason);
      let result: ReloadResult;
      try {
        result = await reload(reason);
      } catch (err) {
        result = { skills: [], skipped: [], configError: errorMessage(err) };
      }
      return reloadResponse(result, replica);
    },
    broadcastHandler: broadcast.handler,
  };
}

export function reloadResponse(result: ReloadResult, replica: string): ReloadSkillsResponse {
  return create(ReloadSkillsResponseSchema, {
    skills: result.skills,
    skipped: result.skipped.map((s) => create(SkippedSkillSchema, { id: s.id, reason: s.reason })),
    configError: result.configError ?? '',
    replica,
  });
}
