import type { Store } from '@agentloop/store';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';

export interface LedgerCall extends ToolCallInput {
  /** From the tool's metadata: safe to run again when an earlier attempt may have run it. */
  idempotent: boolean;
}

export type LedgerOutcome = ToolCallResult & {
  /** How the result was obtained. */
  source: 'executed' | 'recorded' | 're-executed' | 'refused';
};

/** The message a non-idempotent call gets when a crash left its outcome unknown. */
export const interruptedMessage = (tool: string): string => `Error: interrupted before completion; not retried because ${tool} has side effects`;

/**
 * Exactly-once tool side effects across retries and crashes. Every call is
 * claimed in the ledger under (run id, tool call id) before it runs and its
 * result recorded before the ToolMessage is committed to the checkpoint:
 * - a call already completed returns the recorded result, never runs again;
 * - a call started by an attempt that died runs again only if its tool is
 *   idempotent; otherwise the model is told and decides.
 * A call that came back needing the user's input (an MCP elicitation) is not completed: it had no
 * effect to record (the server was told the user cancelled) and is retried with the answer. The
 * MCP broker asks the user only during tools that may run again (idempotent or read-only), so a
 * retry that carries the answer runs again even where an earlier attempt left the claim open.
 */
export async function executeWithLedger(
  store: Pick<Store, 'claimToolEffect' | 'restartToolEffect' | 'completeToolEffect'>,
  call: LedgerCall,
  execute: (call: ToolCallInput) => Promise<ToolCallResult>,
  /** Asks the executor what became of this call (idempotency key), without running it. */
  recorded?: (call: ToolCallInput) => Promise<ToolCallResult | 'not-executed' | undefined>,
  /** Runs an idempotent call again although it was started before; defaults to `execute`. */
  reexecute?: (call: ToolCallInput) => Promise<ToolCallResult>,
): Promise<LedgerOutcome> {
  const { effect, created } = await store.claimToolEffect({
    tenantId: call.tenantId,
    threadId: call.threadId,
    runId: call.runId,
    toolCallId: call.toolCallId,
    toolName: call.name,
  });
  if (!created && effect.state === 'completed') {
    return { content: effect.content ?? '', isError: effect.isError, source: 'recorded' };
  }
  let source: LedgerOutcome['source'] = 'executed';
  let result: ToolCallResult;
  if (!created && call.elicitationAnswerJson) {
    await store.restartToolEffect(call.tenantId, call.runId, call.toolCallId);
    source = 're-executed';
  } else if (!created) {
    // The worker died after sending the call: the tool-runner may have finished it and kept its reply.
    const prior = recorded ? await recorded(call) : undefined;
    if (prior === 'not-executed') {
      // It never reached a tool-runner (lost with the dead worker): running it now is its first execution.
      const res = await execute(call);
      const done = await store.completeToolEffect(call.tenantId, call.runId, call.toolCallId, { content: res.content, isError: res.isError });
      return { content: done.content ?? res.content, isError: done.isError, source: 'executed' };
    }
    if (prior) {
      const done = await store.completeToolEffect(call.tenantId, call.runId, call.toolCallId, { content: prior.content, isError: prior.isError });
      return { content: done.content ?? prior.content, isError: done.isError, source: 'recorded' };
    }
    if (!call.idempotent) {
      result = { content: interruptedMessage(call.name), isError: true, errorCode: 'INTERRUPTED' };
      const done = await store.completeToolEffect(call.tenantId, call.runId, call.toolCallId, { content: result.content, isError: true });
      return { content: done.content ?? result.content, isError: done.isError, source: 'refused' };
    }
    await store.restartToolEffect(call.tenantId, call.runId, call.toolCallId);
    source = 're-executed';
  }
  // A retry with the user's answer is an ordinary call (the provider's progress reported as usual).
  result = source === 're-executed' && reexecute && !call.elicitationAnswerJson ? await reexecute(call) : await execute(call);
  if (result.elicitation) return { ...result, source };
  const done = await store.completeToolEffect(call.tenantId, call.runId, call.toolCallId, { content: result.content, isError: result.isError });
  // If another attempt completed it first, its recorded result wins. The ledger keeps text only:
  // this attempt's media (images, audio) go with it when its text is the one recorded.
  const ours = done.content === undefined || done.content === null || done.content === result.content;
  return {
    content: done.content ?? result.content,
    isError: done.isError,
    ...(result.errorCode ? { errorCode: result.errorCode } : {}),
    ...(ours && result.media ? { media: result.media } : {}),
    source,
  };
}
