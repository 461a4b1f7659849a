import type { Bus, EventHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, ReloadSkillsRequestSchema, ReloadSkillsResponseSchema, SkippedSkillSchema, type ReloadSkillsResponse } from '@agentloop/proto';
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
 * ReloadSkills (`agentloop.skills.reload`, queue group: one replica answers): re-publishes the request on the
 * broadcast subject so every other replica reloads too, reloads this one and replies with the result.
 */
export function reloadSkills({ reload, bus, logger, replica, broadcastSubject }: ReloadHandlerDeps): SkillsMethod<'reloadSkills'> {
  return async (req) => {
    const reason = req.reason || 'reload request';
    try {
      await bus.publish(broadcastSubject, toBinary(ReloadSkillsRequestSchema, create(ReloadSkillsRequestSchema, { originReplica: replica, reason })));
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'could not broadcast the reload to the other replicas');
    }
    let result: ReloadResult;
    try {
      result = await reload(reason);
    } catch (err) {
      result = { skills: [], skipped: [], configError: errorMessage(err) };
    }
    return reloadResponse(result, replica);
  };
}

/** `agentloop.skills.reload.broadcast`: every replica reloads, except the one that published it. */
export function reloadBroadcastHandler({ reload, logger, replica }: Omit<ReloadHandlerDeps, 'bus' | 'broadcastSubject'>): EventHandler {
  return (msg) => {
    let origin = '';
    let reason = 'broadcast';
    try {
      const req = fromBinary(ReloadSkillsRequestSchema, msg.data);
      origin = req.originReplica;
      reason = req.reason || reason;
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'malformed reload broadcast; reloading anyway');
    }
    if (origin === replica) return;
    reload(`${reason} (broadcast from ${origin || 'unknown'})`).catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'broadcast reload failed'));
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
