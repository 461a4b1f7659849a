import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { getCallbackManagerForConfig } from '@langchain/core/runnables';
import type { ToolMessage } from '@langchain/core/messages';
import type { Logger } from '@agentloop/core';
import { hasCallbackHandlers, tracingRequested } from '../langchain-context.js';

let tracing: boolean | undefined;
/** LangChain/LangSmith tracing switched on in the environment, read once per process (as langchain-context.ts does). */
const tracingOn = (): boolean => (tracing ??= tracingRequested());

/** How the tool appears in LangChain's callbacks (`serialized`): not a LangChain tool, so "not_implemented". */
const SERIALIZED = { lc: 1 as const, type: 'not_implemented' as const, id: ['agentloop', 'tool'] };

/**
 * Reports a tool call's start and end through the run's LangChain callbacks, as a LangChain tool
 * does: LangGraph turns them into the `tools` stream mode ({event: "on_tool_start" | "on_tool_end",
 * toolCallId, name, input | output}) and the `events` mode's on_tool_start / on_tool_end. The run's
 * stream adds the tool's display_name (run/stream-modes.ts). Callback failures never fail the call.
 */
export async function withToolEvents(
  config: LangGraphRunnableConfig,
  call: { id: string; name: string; args: Record<string, unknown> },
  logger: Logger,
  run: (emit: (data: Record<string, unknown>) => void) => Promise<ToolMessage>,
): Promise<ToolMessage> {
  // Nobody to tell (no `tools`/`events` stream mode, no tracer): no callback manager and run ids
  // built per call for nothing (issue 9). Tracing switched on in the environment adds a tracer
  // that is not in the config, so then the manager is always configured.
  if (!hasCallbackHandlers(config.callbacks) && !tracingOn()) return run(() => {});
  let handle: Awaited<ReturnType<NonNullable<Awaited<ReturnType<typeof getCallbackManagerForConfig>>>['handleToolStart']>> | undefined;
  try {
    const manager = await getCallbackManagerForConfig(config);
    handle = await manager?.handleToolStart(SERIALIZED, call.args, undefined, undefined, undefined, undefined, call.name, call.id);
  } catch (err) {
    logger.warn({ tool: call.name, tool_call_id: call.id, err: err instanceof Error ? err.message : String(err) }, 'tool start event not sent');
  }
  // Events are sent in order, and all of them before the end event.
  let sent: Promise<void> = Promise.resolve();
  const emit = (data: Record<string, unknown>) => {
    if (!handle) return;
    const h = handle;
    sent = sent
      .then(() => h.handleToolEvent(data))
      .catch((err: unknown) => {
        logger.debug({ tool: call.name, tool_call_id: call.id, err: err instanceof Error ? err.message : String(err) }, 'tool progress event not sent');
      });
  };
  const message = await run(emit);
  await sent;
  try {
    await handle?.handleToolEnd(message);
  } catch (err) {
    logger.warn({ tool: call.name, tool_call_id: call.id, err: err instanceof Error ? err.message : String(err) }, 'tool end event not sent');
  }
  return message;
}
