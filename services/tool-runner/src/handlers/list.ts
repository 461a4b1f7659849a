import type { RequestHandler } from '@agentloop/bus';
import { create, fromBinary, toBinary, ListToolsRequestSchema, ListToolsResponseSchema, type ListToolsRequest } from '@agentloop/proto';
import type { ToolRegistry } from '../registry.js';

/**
 * `agentloop.tools.list`: without a visibility field, the registered (enabled)
 * tools; with `allowed`, `mentioned`, `subagent` or `visible`, the visible set
 * of seed 000 §2.6 (persistent → allowed → mentioned, de-duplicated) plus the
 * requested names that matched nothing.
 */
export function listToolsHandler(registry: ToolRegistry): RequestHandler {
  return (msg) => {
    const req = fromBinary(ListToolsRequestSchema, msg.data);
    if (!asksForVisible(req)) {
      return Promise.resolve(toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: registry.specs() })));
    }
    // No allowlist means every enabled tool is allowed (a session starts with all enabled tools, seed 000 §2.6);
    // the order stays persistent → allowed → mentioned.
    const allowed = req.allowed.length > 0 ? req.allowed : registry.names();
    const { records, notFound } = registry.visible({ allowed, mentioned: req.mentioned, subagent: req.subagent });
    return Promise.resolve(
      toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: records.map((r) => r.spec), notFound })),
    );
  };
}

function asksForVisible(req: ListToolsRequest): boolean {
  return req.visible || req.subagent || req.allowed.length > 0 || req.mentioned.length > 0;
}
