import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import type { ListToolsRequest, ToolRunner } from '@agentloop/proto';
import type { ToolRegistry } from '../registry.js';

/**
 * ListTools (`agentloop.tools.list`): without a visibility field, the registered (enabled)
 * tools; with `allowed`, `mentioned`, `subagent` or `visible`, the visible set
 * of seed 000 §2.6 (persistent → allowed → mentioned, de-duplicated) plus the
 * requested names that matched nothing.
 */
export function listTools(registry: ToolRegistry): MethodImpl<ServiceShape<typeof ToolRunner>, 'listTools'> {
  return (req) => {
    if (!asksForVisible(req)) return { tools: registry.specs() };
    // No allowlist means every enabled tool is allowed (a session starts with all enabled tools, seed 000 §2.6);
    // the order stays persistent → allowed → mentioned.
    const allowed = req.allowed.length > 0 ? req.allowed : registry.names();
    const { records, notFound } = registry.visible({ allowed, mentioned: req.mentioned, subagent: req.subagent });
    return { tools: records.map((r) => r.spec), notFound };
  };
}

function asksForVisible(req: ListToolsRequest): boolean {
  return req.visible || req.subagent || req.allowed.length > 0 || req.mentioned.length > 0;
}
