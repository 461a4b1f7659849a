/**
 * What clients see of a run's graph state: public values (bookkeeping fields stay private) and
 * the interrupts that wait for a human. Delegation interrupts are internal — clients see the
 * `delegate` update the executor publishes instead.
 */
import type { JsonObject } from '@agentloop/store';
import { runUsageFor, ZERO_USAGE, type RunUsage } from '../usage.js';
import { toJsonValue } from '../serialize.js';
import { isDelegationRequest } from '../delegation.js';

/**
 * State values as shown to clients: internal bookkeeping fields stay private.
 * `token_usage` = { run: this run's tokens and model calls, thread: every call on the thread }.
 */
export function publicValues(v: JsonObject | undefined, runId: string): JsonObject {
  if (!v) return {};
  const { messages, loops, max_loops, finalize_reason, todos, token_usage, run_usage } = v as Record<string, unknown>;
  return {
    messages: messages ?? [],
    loops,
    max_loops,
    finalize_reason,
    ...(todos !== undefined ? { todos } : {}),
    token_usage: {
      run: runUsageFor(runId, run_usage as RunUsage | undefined),
      thread: (token_usage as JsonObject | undefined) ?? { ...ZERO_USAGE },
    },
  } as JsonObject;
}

/** Interrupts of a graph state that wait for a human (every one but a delegation), as `__interrupt__` lists them. */
export function humanInterrupts(snapshot: {
  tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }>;
}): Array<{ id?: string; value: unknown }> {
  const out: Array<{ id?: string; value: unknown }> = [];
  for (const t of snapshot.tasks ?? []) {
    for (const i of t.interrupts ?? []) if (!isDelegationRequest(i.value)) out.push({ ...(i.id ? { id: i.id } : {}), value: toJsonValue(i.value) });
  }
  return out;
}

/** An `updates` chunk that only reports the delegate node's interrupt. */
export function isDelegationInterrupt(data: unknown): boolean {
  const list = data && typeof data === 'object' ? (data as { __interrupt__?: unknown }).__interrupt__ : undefined;
  return Array.isArray(list) && list.length > 0 && list.every((i: unknown) => isDelegationRequest((i as { value?: unknown } | null)?.value));
}
