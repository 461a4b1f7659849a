import { errorMessage, newId, type Logger } from '@agentloop/core';
import type { Bus, Subscription } from './types.js';

/**
 * The cluster-wide reload (`POST /admin/reload`, issue 13): the gateway publishes one request on
 * {@link CLUSTER_RELOAD_SUBJECT}; every replica of every service that holds configuration read from
 * files (tools.yaml and tool modules, skills, mcp_servers.yaml, HITL rules, cached listings) is
 * subscribed without a queue group, reloads, and publishes its result on the request's `reply_to`
 * subject. The gateway collects results for a bounded time, since it cannot know how many replicas run.
 *
 * The payloads are JSON, not protobuf: a scatter-gather across services with an open-ended
 * `reloaded` summary per service, added while the proto contract was frozen (see docs/adr/0009).
 */
export const CLUSTER_RELOAD_SUBJECT = 'agentloop.admin.reload';

/** One service replica's answer to a cluster reload. */
export interface ServiceReloadResult {
  /** The service (`tool-runner`, `skill-sandbox`, `mcp-broker`, `approval`, `orchestrator`). */
  service: string;
  /** Which replica answered (host:pid:id). */
  instance: string;
  ok: boolean;
  /** What the service reloaded, e.g. `{tools: [...]}`; on failure what stayed in force. */
  reloaded: Record<string, unknown>;
  error?: string;
}

interface ClusterReloadRequest {
  request_id: string;
  reason: string;
  reply_to: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function parseRequest(data: Uint8Array): ClusterReloadRequest | undefined {
  try {
    const v: unknown = JSON.parse(decoder.decode(data));
    if (!isObj(v) || typeof v.reply_to !== 'string' || !v.reply_to.startsWith(`${CLUSTER_RELOAD_SUBJECT}.reply.`)) return undefined;
    return { request_id: String(v.request_id ?? ''), reason: String(v.reason ?? 'reload'), reply_to: v.reply_to };
  } catch {
    return undefined;
  }
}

function parseResult(data: Uint8Array): ServiceReloadResult | undefined {
  try {
    const v: unknown = JSON.parse(decoder.decode(data));
    if (!isObj(v) || typeof v.service !== 'string' || typeof v.instance !== 'string' || typeof v.ok !== 'boolean') return undefined;
    return {
      service: v.service,
      instance: v.instance,
      ok: v.ok,
      reloaded: isObj(v.reloaded) ? v.reloaded : {},
      ...(typeof v.error === 'string' ? { error: v.error } : {}),
    };
  } catch {
    return undefined;
  }
}

export interface ServeClusterReloadOptions {
  service: string;
  instance: string;
  logger: Logger;
  /** Reloads this replica; returns a summary of what it holds now. A throw is answered as `ok: false`. */
  reload: (reason: string) => Promise<Record<string, unknown>>;
}

/** Subscribes a replica to cluster reloads (no queue group: every replica reloads and answers). */
export function serveClusterReload(bus: Bus, opts: ServeClusterReloadOptions): Promise<Subscription> {
  const { service, instance, logger } = opts;
  return bus.subscribe(CLUSTER_RELOAD_SUBJECT, (msg) => {
    const req = parseRequest(msg.data);
    if (!req) return void logger.warn('ignoring a malformed cluster reload request');
    void (async () => {
      let result: ServiceReloadResult;
      try {
        result = { service, instance, ok: true, reloaded: await opts.reload(`${req.reason} (cluster reload ${req.request_id})`) };
        logger.info({ request_id: req.request_id }, 'reloaded on cluster request');
      } catch (err) {
        result = { service, instance, ok: false, reloaded: {}, error: errorMessage(err) };
        logger.error({ request_id: req.request_id, err: result.error }, 'cluster reload failed; the previous configuration stays in force');
      }
      await bus.publish(req.reply_to, encoder.encode(JSON.stringify(result)));
    })().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'could not answer a cluster reload'));
  });
}

/**
 * Publishes a cluster reload and returns every answer that arrived within `collectMs`, sorted by
 * service then instance.
 */
export async function requestClusterReload(bus: Bus, opts: { reason: string; collectMs: number }): Promise<ServiceReloadResult[]> {
  const requestId = newId();
  const replyTo = `${CLUSTER_RELOAD_SUBJECT}.reply.${requestId}`;
  const results: ServiceReloadResult[] = [];
  const sub = await bus.subscribe(replyTo, (msg) => {
    const r = parseResult(msg.data);
    if (r) results.push(r);
  });
  try {
    const request: ClusterReloadRequest = { request_id: requestId, reason: opts.reason, reply_to: replyTo };
    await bus.publish(CLUSTER_RELOAD_SUBJECT, encoder.encode(JSON.stringify(request)));
    await new Promise((resolve) => setTimeout(resolve, opts.collectMs));
  } finally {
    await sub.unsubscribe();
  }
  return results.sort((a, b) => a.service.localeCompare(b.service) || a.instance.localeCompare(b.instance));
}
