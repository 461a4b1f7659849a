import type { RunEventStream, StoredRunEvent } from '@agentloop/bus';
import { EventCursor } from '../run-service/event-cursor.js';

/** How long the log may stay silent before the read counts as caught up (a run still going). */
const CAUGHT_UP_IDLE_MS = 250;
/** A read never holds a request longer than this, however long the log. */
const READ_BUDGET_MS = 5_000;
const MAX_EVENTS = 10_000;

/**
 * The run's event log as it stands now: every event kept (the log is bounded: 24 h and a byte
 * budget), up to `end`, or up to the point where a run still going has published nothing for a
 * moment. Unlike a join, it never waits for the run.
 */
export async function readEventLog(events: RunEventStream, runId: string, signal: AbortSignal): Promise<StoredRunEvent[]> {
  const budget = AbortSignal.any([signal, AbortSignal.timeout(READ_BUDGET_MS)]);
  const cursor = new EventCursor(events, runId, 0, budget);
  const out: StoredRunEvent[] = [];
  try {
    while (out.length < MAX_EVENTS) {
      const ev = await cursor.next(CAUGHT_UP_IDLE_MS);
      if (ev === undefined || ev === 'idle') break;
      out.push(ev);
      if (ev.event === 'end') break;
    }
  } finally {
    cursor.close();
  }
  return out;
}
