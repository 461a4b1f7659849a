import { InvalidArgumentError } from '@agentloop/core';

/** Run ids become one subject token (`agentloop.events.<run_id>`): no dots, wildcards or spaces. */
export function assertRunId(runId: string): void {
  if (!/^[-\w]+$/.test(runId)) {
    throw new InvalidArgumentError(`Invalid run id "${runId}": use letters, digits, '-' or '_' (a UUID works)`);
  }
}

/** The event that closes a run's stream: iteration stops after it. */
export const END_EVENT = 'end';
