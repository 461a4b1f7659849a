import { errorMessage, newId, type Logger } from '@agentloop/core';
import {
  McpServerReloadRequestSchema,
  McpServerReloadResultSchema,
  McpToolsChangedSchema,
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageShape,
} from '@agentloop/proto';
import type { Bus, Subscription } from './types.js';

/**
 * Two small subjects of the MCP broker (proto/agentloop/v1/admin.proto; a scatter-gather like
 * cluster-reload.ts, ADR 0009):
 *
 * - {@link MCP_SERVER_RELOAD_SUBJECT}: `POST /admin/mcp/servers/{id}/reload` (seed 004's
 *   `reload_mcp_server`) asks every broker replica (no queue group) to restart one server and
 *   collects each replica's answer for a bounded time.
 * - {@link MCP_TOOLS_CHANGED_SUBJECT}: a broker replica announces that a server's tool list became
 *   known or changed (a slow server finished starting); orchestrators drop their cached listings
 *   so the run's next model call lists again and offers the tools at once.
 */
export const MCP_SERVER_RELOAD_SUBJECT = 'agentloop.admin.mcp.reload-server';
export const MCP_TOOLS_CHANGED_SUBJECT = 'agentloop.mcp.tools.changed';

/** One broker replica's answer to a server reload. */
export interface McpServerReloadResult {
  instance: string;
  ok: boolean;
  /** The server's state afterwards (`running`, …) and its tool count. */
  state?: string;
  tools?: number;
  /** The replica has no such server (not configured there, or disabled). */
  unknown?: boolean;
  error?: string;
}

/** The message, or undefined when `data` is not one (a malformed publish is ignored, not fatal). */
function decode<D extends DescMessage>(schema: D, data: Uint8Array): MessageShape<D> | undefined {
  try {
    return fromBinary(schema, data);
  } catch {
    return undefined;
  }
}

export interface ServeMcpServerReloadOptions {
  instance: string;
  logger: Logger;
  /** Restarts the server on this replica; the answer without `instance`. */
  restart: (server: string) => Promise<Omit<McpServerReloadResult, 'instance'>>;
}

/** Subscribes a broker replica to server reloads (every replica restarts and answers). */
export function serveMcpServerReload(bus: Bus, opts: ServeMcpServerReloadOptions): Promise<Subscription> {
  return bus.subscribe(MCP_SERVER_RELOAD_SUBJECT, (msg) => {
    const req = decode(McpServerReloadRequestSchema, msg.data);
    const replyTo = req?.replyTo ?? '';
    if (!req?.server || !replyTo.startsWith(`${MCP_SERVER_RELOAD_SUBJECT}.reply.`)) {
      return void opts.logger.warn('ignoring a malformed MCP server reload request');
    }
    const server = req.server;
    void (async () => {
      let result: McpServerReloadResult;
      try {
        result = { instance: opts.instance, ...(await opts.restart(server)) };
      } catch (err) {
        result = { instance: opts.instance, ok: false, error: errorMessage(err) };
      }
      const wire = create(McpServerReloadResultSchema, {
        instance: result.instance,
        ok: result.ok,
        state: result.state ?? '',
        ...(result.tools !== undefined ? { tools: result.tools } : {}),
        unknown: result.unknown ?? false,
        error: result.error ?? '',
      });
      await bus.publish(replyTo, toBinary(McpServerReloadResultSchema, wire));
    })().catch((err: unknown) => opts.logger.warn({ err: errorMessage(err) }, 'could not answer an MCP server reload'));
  });
}

/** Asks every broker replica to restart `server`; the answers that arrived within `collectMs`, by instance. */
export async function requestMcpServerReload(bus: Bus, opts: { server: string; collectMs: number }): Promise<McpServerReloadResult[]> {
  const replyTo = `${MCP_SERVER_RELOAD_SUBJECT}.reply.${newId()}`;
  const results: McpServerReloadResult[] = [];
  const sub = await bus.subscribe(replyTo, (msg) => {
    const v = decode(McpServerReloadResultSchema, msg.data);
    if (!v?.instance) return;
    results.push({
      instance: v.instance,
      ok: v.ok,
      ...(v.state ? { state: v.state } : {}),
      ...(v.tools !== undefined ? { tools: v.tools } : {}),
      ...(v.unknown ? { unknown: true } : {}),
      ...(v.error ? { error: v.error } : {}),
    });
  });
  try {
    await bus.publish(
      MCP_SERVER_RELOAD_SUBJECT,
      toBinary(McpServerReloadRequestSchema, create(McpServerReloadRequestSchema, { server: opts.server, replyTo })),
    );
    await new Promise((resolve) => setTimeout(resolve, opts.collectMs));
  } finally {
    await sub.unsubscribe();
  }
  return results.sort((a, b) => a.instance.localeCompare(b.instance));
}

/** Announces that `server`'s tools became known or changed on a broker replica. */
export async function publishMcpToolsChanged(bus: Bus, server: string): Promise<void> {
  await bus.publish(MCP_TOOLS_CHANGED_SUBJECT, toBinary(McpToolsChangedSchema, create(McpToolsChangedSchema, { server })));
}

/** Calls `onChanged` whenever a broker replica announces changed MCP tools (every subscriber hears it). */
export function onMcpToolsChanged(bus: Bus, onChanged: (server: string) => void): Promise<Subscription> {
  return bus.subscribe(MCP_TOOLS_CHANGED_SUBJECT, (msg) => {
    const v = decode(McpToolsChangedSchema, msg.data);
    if (v?.server) onChanged(v.server);
  });
}
