import { hostname } from 'node:os';
import { isMainThread, threadId } from 'node:worker_threads';
import { errorMessage, newId, type Logger } from '@agentloop/core';
import { ClusterReloadRequestSchema, ServiceReloadResultSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import type { Bus, Subscription } from './types.js';

/**
 * The cluster-wide reload (`POST /admin/reload`, issue 13): the gateway publishes one request on
 * {@link CLUSTER_RELOAD_SUBJECT}; every replica of every service that holds configuration read from
 * files (tools.yaml and tool modules, skills, mcp_servers.yaml, HITL rules, cached listings) is
 * subscribed without a queue group, reloads, and publishes its result on the request's `reply_to`
 * subject. The gateway collects results for a bounded time, since it cannot know how many replicas run.
 *
 * The payloads are proto ClusterReloadRequest / ServiceReloadResult (proto/agentloop/v1/admin.proto);
 * each service's `reloaded` summary is open-ended, so it travels as a JSON object in `reloaded_json`.
 */
export const CLUSTER_RELOAD_SUBJECT = 'agentloop.admin.reload';

/**
 * A new replica id for reload answers: `host:pid:id`, or `host:pid:thread-N:id` for a service in a
 * worker thread — embedded mode's orchestrator threads (EMBEDDED_THREADS) each hold their own
 * tool-runner, skill sandbox, MCP broker, approval service and orchestrator, which reload and
 * answer on their own, as the replicas of a cluster do; the id says which thread of the process
 * each one is.
 */
export function replicaInstance(): string {
  return `${hostname()}:${process.pid}:${isMainThread ? '' : `thread-${threadId}:`}${newId().slice(0, 8)}`;
}

/** One service replica's answer to a cluster reload. */
export interface ServiceReloadResult {
  /** The service (`tool-runner`, `skill-sandbox`, `mcp-broker`, `approval`, `orchestrator`). */
  service: string;
  /** Which replica answered (host:pid:id, or host:pid:thread-N:id: see replicaInstance). */
  instance: string;
  ok: boolean;
  /** What the service reloaded, e.g. `{tools: [...]}`; on failure what stayed in force. */
  reloaded: Record<string, unknown>;
  error?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function parseRequest(data: Uint8Array): { requestId: string; reason: string; replyTo: string } | undefined {
  try {
    const r = fromBinary(ClusterReloadRequestSchema, data);
    if (!r.replyTo.startsWith(`${CLUSTER_RELOAD_SUBJECT}.reply.`)) return undefined;
    return { requestId: r.requestId, reason: r.reason || 'reload', replyTo: r.replyTo };
  } catch {
    return undefined;
  }
}

function parseResult(data: Uint8Array): ServiceReloadResult | undefined {
  try {
    const r = fromBinary(ServiceReloadResultSchema, data);
    if (!r.service || !r.instance) return undefined;
    let reloaded: unknown = {};
    try {
      reloaded = r.reloadedJson ? JSON.parse(r.reloadedJson) : {};
    } catch {
      reloaded = {};
    }
    return { service: r.service, instance: r.instance, ok: r.ok, reloaded: isObj(reloaded) ? reloaded : {}, ...(r.error ? { error: r.error } : {}) };
  } catch {
    return undefined;
  }
}

function encodeResult(r: ServiceReloadResult): Uint8Array {
  return toBinary(
    ServiceReloadResultSchema,
    create(ServiceReloadResultSchema, { service: r.service, instance: r.instance, ok: r.ok, reloadedJson: JSON.stringify(r.reloaded), error: r.error ?? '' }),
  );
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
        result = { service, instance, ok: true, reloaded: await opts.reload(`${req.reason} (cluster reload ${req.requestId})`) };
        logger.info({ request_id: req.requestId }, 'reloaded on cluster request');
      } catch (err) {
        result = { service, instance, ok: false, reloaded: {}, error: errorMessage(err) };
        logger.error({ request_id: req.requestId, err: result.error }, 'cluster reload failed; the previous configuration stays in force');
      }
      await bus.publish(req.replyTo, encodeResult(result));
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
    const request = create(ClusterReloadRequestSchema, { requestId, reason: opts.reason, replyTo });
    await bus.publish(CLUSTER_RELOAD_SUBJECT, toBinary(ClusterReloadRequestSchema, request));
    await new Promise((resolve) => setTimeout(resolve, opts.collectMs));
  } finally {
    await sub.unsubscribe();
  }
  return results.sort((a, b) => a.service.localeCompare(b.service) || a.instance.localeCompare(b.instance));
}
