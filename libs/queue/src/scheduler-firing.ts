/** How a tick travels as a queue job: the same encoding for both schedulers. */
import type { Firing } from './scheduler-types.js';

/** Attempts of one tick's handler before the tick is given up (the next tick still comes). */
export const TICK_ATTEMPTS = 3;
export const TICK_BACKOFF_MS = 1_000;

interface StoredFiring {
  s: string;
  t: number;
  d: string;
}

export function encodeFiring(f: Firing): Uint8Array {
  const stored: StoredFiring = { s: f.scheduleId, t: f.tickAt, d: Buffer.from(f.data).toString('base64') };
  return new TextEncoder().encode(JSON.stringify(stored));
}

export function decodeFiring(payload: Uint8Array): Firing {
  const stored = JSON.parse(new TextDecoder().decode(payload)) as StoredFiring;
  return { scheduleId: stored.s, tickAt: stored.t, data: new Uint8Array(Buffer.from(stored.d, 'base64')) };
}
