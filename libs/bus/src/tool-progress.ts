import { ToolProgressSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import { Headers, type Bus, type Subscription } from './types.js';
import { assertRunId } from './run-id.js';

/**
 * Progress of a tool call in flight, reported by the provider running it (the MCP broker relays
 * an MCP server's `notifications/progress`). The orchestrator running the call turns each one
 * into a `tools` stream event (`on_tool_event`), so clients see it beside on_tool_start/end.
 */
export interface ToolProgress {
  tool_call_id: string;
  /** The tool's name as offered to the model. */
  name: string;
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Broadcast subject (publish/subscribe, proto ToolProgress, tenant in the `agentloop-tenant` header) of a
 * run's tool progress. Plain core pub/sub, not the run's event stream: the orchestrator executing
 * the run is the only reader and adds the event to the stream itself (with its namespace and
 * display_name), and a lost progress notice is harmless.
 */
export function toolProgressSubject(runId: string): string {
  assertRunId(runId);
  return `agentloop.tools.progress.${runId}`;
}

export async function publishToolProgress(bus: Bus, tenantId: string, runId: string, p: ToolProgress): Promise<void> {
  const wire = create(ToolProgressSchema, {
    toolCallId: p.tool_call_id,
    name: p.name,
    progress: p.progress,
    ...(p.total !== undefined ? { total: p.total } : {}),
    ...(p.message !== undefined ? { message: p.message } : {}),
  });
  await bus.publish(toolProgressSubject(runId), toBinary(ToolProgressSchema, wire), { [Headers.tenant]: tenantId });
}

/**
 * Calls `onProgress` for the progress of one tool call of a run; reports from another tenant (a
 * forged or mistaken run id) and malformed payloads are ignored.
 */
export async function subscribeToolProgress(
  bus: Bus,
  call: { tenantId: string; runId: string; toolCallId: string },
  onProgress: (p: ToolProgress) => void,
): Promise<Subscription> {
  return bus.subscribe(toolProgressSubject(call.runId), (msg) => {
    if (msg.headers[Headers.tenant] !== call.tenantId) return;
    let wire;
    try {
      wire = fromBinary(ToolProgressSchema, msg.data);
    } catch {
      return;
    }
    if (!wire.toolCallId || wire.toolCallId !== call.toolCallId || !Number.isFinite(wire.progress)) return;
    const p: ToolProgress = {
      tool_call_id: wire.toolCallId,
      name: wire.name,
      progress: wire.progress,
      ...(wire.total !== undefined ? { total: wire.total } : {}),
      ...(wire.message !== undefined ? { message: wire.message } : {}),
    };
    onProgress(p);
  });
}
