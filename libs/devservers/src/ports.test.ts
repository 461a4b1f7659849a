import { existsSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { findBinary, freePort, hasBinary, startBinaryServer, useDocker } from './ports.js';

describe('freePort', () => {
  it('returns a port that can be bound on 127.0.0.1', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
});

describe('hasBinary', () => {
  it('finds an installed executable', () => {
    expect(hasBinary('sh')).toBe(true);
    expect(findBinary('sh')).toMatch(/\/sh$/);
  });

  it('is false for a name that is not installed', () => {
    expect(hasBinary('agentloop-no-such-binary')).toBe(false);
  });
});

describe('useDocker', () => {
  it('honours an explicit binary mode', async () => {
    expect(await useDocker('binary')).toBe(false);
  });
});

describe('startBinaryServer', () => {
  it('fails with the given message when the binary is missing', async () => {
    await expect(
      startBinaryServer({
        binary: 'agentloop-no-such-binary',
        missing: 'agentloop-no-such-binary not found: install it',
        args: () => [],
        ready: async () => true,
        url: (h, p) => `x://${h}:${p}`,
      }),
    ).rejects.toThrow('agentloop-no-such-binary not found: install it');
  });

  it('reports the output of a server that exits before it is ready', async () => {
    await expect(
      startBinaryServer({
        binary: 'sh',
        missing: 'sh missing',
        args: () => ['-c', 'echo boom-from-server; exit 3'],
        ready: async () => false,
        url: (h, p) => `x://${h}:${p}`,
      }),
    ).rejects.toThrow(/exited \(3\) before it was ready:\s+boom-from-server/);
  });

  it('removes its temp dir on stop() and rejects restart() afterwards', async () => {
    const s = await startBinaryServer({
      binary: 'sh',
      missing: 'sh missing',
      args: () => ['-c', 'sleep 30'],
      ready: async () => true,
      url: (h, p) => `x://${h}:${p}`,
    });
    expect(existsSync(s.dataDir)).toBe(true);
    await s.stop();
    expect(existsSync(s.dataDir)).toBe(false);
    await expect(s.restart()).rejects.toThrow(/was stopped/);
  });
});
