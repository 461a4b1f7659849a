import { describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import { ReloadToolsRequestSchema } from '@agentloop/proto';
import { MemoryBus } from './memory-bus.js';
import { reloadBroadcast } from './reload-broadcast.js';

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('reloadBroadcast', () => {
  it('every replica but the announcer reloads, with the reason and who announced it', async () => {
    const bus = new MemoryBus();
    const reloaded: Record<string, string[]> = { a: [], b: [], c: [] };
    const replicas = Object.keys(reloaded).map((replica) =>
      reloadBroadcast({
        bus,
        logger: silentLogger(),
        replica,
        subject: 'svc.reload.broadcast',
        schema: ReloadToolsRequestSchema,
        reload: async (reason) => void reloaded[replica]!.push(reason),
      }),
    );
    for (const r of replicas) await bus.subscribe('svc.reload.broadcast', r.handler);
    await replicas[0]!.announce('new module');
    await settle();
    expect(reloaded).toEqual({ a: [], b: ['new module (broadcast from a)'], c: ['new module (broadcast from a)'] });
  });

  it('reloads on a malformed broadcast (safer than missing a reload), and survives a failing reload', async () => {
    const bus = new MemoryBus();
    const reasons: string[] = [];
    const r = reloadBroadcast({
      bus,
      logger: silentLogger(),
      replica: 'x',
      subject: 's',
      schema: ReloadToolsRequestSchema,
      reload: async (reason) => {
        reasons.push(reason);
        throw new Error('bad config');
      },
    });
    await bus.subscribe('s', r.handler);
    await bus.publish('s', new Uint8Array([0xff, 0xff, 0xff]));
    await settle();
    expect(reasons).toEqual(['broadcast (broadcast from unknown)']);
  });
});
