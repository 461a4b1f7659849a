import type { RequestHandler } from '@agentloop/bus';
import { create, fromBinary, toBinary, ListToolsRequestSchema, ListToolsResponseSchema } from '@agentloop/proto';
import type { ToolRegistry } from '../registry.js';

/** `agentloop.tools.list`: the specs of every registered tool. */
export function listToolsHandler(registry: ToolRegistry): RequestHandler {
  return (msg) => {
    // Decoded to reject a malformed request; tenant-specific visibility comes with the tool tiers.
    fromBinary(ListToolsRequestSchema, msg.data);
    return Promise.resolve(toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: registry.specs() })));
  };
}
