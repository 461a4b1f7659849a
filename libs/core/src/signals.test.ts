import { describe, expect, it } from 'vitest';
import { silentLogger } from './logger.js';
import { exitOnSignals, type SignalTarget } from './signals.js';

function fakeProcess() {
  const listeners = new Map<string, () => void>();
  const exits: number[] = [];
  const target: SignalTarget = { on: (s, l) => listeners.set(s, l), exit: (code) => void exits.push(code) };
  return { target, exits, send: (s: string) => listeners.get(s)!() };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('exitOnSignals', () => {
  it('stops once on SIGTERM or SIGINT, then exits 0; a second signal while stopping does nothing', async () => {
    const p = fakeProcess();
    let stops = 0;
    exitOnSignals(silentLogger(), async () => void stops++, p.target);
    p.send('SIGTERM');
    p.send('SIGINT');
    await settle();
    expect([stops, p.exits]).toEqual([1, [0]]);
  });

  it('exits 1 when stopping fails', async () => {
    const p = fakeProcess();
    exitOnSignals(silentLogger(), () => Promise.reject(new Error('bus stuck')), p.target);
    p.send('SIGINT');
    await settle();
    expect(p.exits).toEqual([1]);
  });
});
