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
 * Broadcast subject (publish/subscribe, JSON payload, tenant in the `agentloop-tenant` header) of a
 * run's tool progress. Plain core pub/sub, not the run's event stream: the orchestrator executing
 * the run is the only reader and adds the event to the stream itself (with its namespace and
 * display_name), and a lost progress notice is harmless.
 */
export function toolProgressSubject(runId: string): string {
  assertRunId(runId);
  return `agentloop.tools.progress.${runId}`;
}

export async function publishToolProgress(bus: Bus, tenantId: string, runId: string, p: ToolProgress): Promise<void> {
  await bus.publish(toolProgressSubject(runId), new TextEncoder().encode(JSON.stringify(p)), { [Headers.tenant]: tenantId });
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
    let p: unknown;
    try {
      p = JSON.parse(new TextDecoder().decode(msg.data));
    } catch {
      return;
    }
    if (!isToolProgress(p) || p.tool_call_id !== call.toolCallId) return;
    onProgress(p);
  });
}

function isToolProgress(v: unknown): v is ToolProgress {
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.tool_call_id === 'string' &&
    typeof o.name === 'string' &&
    typeof o.progress === 'number' &&
    (o.total === undefined || typeof o.total === 'number') &&
    (o.message === undefined || typeof o.message === 'string')
  );
}
