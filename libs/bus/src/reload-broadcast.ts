import { errorMessage, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@agentloop/proto';
import type { Bus, EventHandler } from './types.js';

/** The fields every `Reload…Request` shares: who asked first, and why. */
interface ReloadRequestFields {
  originReplica: string;
  reason: string;
}

export interface ReloadBroadcastOptions<S extends DescMessage> {
  bus: Bus;
  logger: Logger;
  /** This replica's id, written into the broadcast so it can ignore its own. */
  replica: string;
  /** Subject every replica subscribes to (no queue group). */
  subject: string;
  /** The service's reload request message (`ReloadToolsRequest`, `ReloadSkillsRequest`): it has `origin_replica` and `reason`. */
  schema: S;
  /** Reloads this replica. */
  reload: (reason: string) => Promise<unknown>;
}

/**
 * Reloading every replica of a service (tool-runner, skill sandbox): the reload RPC is answered by
 * one replica (queue group), which `announce`s it on a broadcast subject that every replica
 * subscribes to with `handler`; each one but the announcer reloads. One implementation for every
 * service that reloads (issue 10: no code copied between services).
 */
export function reloadBroadcast<S extends DescMessage>(opts: ReloadBroadcastOptions<S>): { announce(reason: string): Promise<void>; handler: EventHandler } {
  const { bus, logger, replica, subject, schema, reload } = opts;
  return {
    async announce(reason) {
      try {
        const init = { originReplica: replica, reason } as unknown as MessageInitShape<S>;
        await bus.publish(subject, toBinary(schema, create(schema, init)));
      } catch (err) {
        logger.warn({ err: errorMessage(err) }, 'could not broadcast the reload to the other replicas');
      }
    },
    handler: (msg) => {
      let origin = '';
      let reason = 'broadcast';
      try {
        const req = fromBinary(schema, msg.data) as unknown as ReloadRequestFields;
        origin = req.originReplica;
        reason = req.reason || reason;
      } catch (err) {
        logger.warn({ err: errorMessage(err) }, 'malformed reload broadcast; reloading anyway');
      }
      if (origin === replica) return;
      reload(`${reason} (broadcast from ${origin || 'unknown'})`).catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'broadcast reload failed'));
    },
  };
}
