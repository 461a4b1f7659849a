import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from './index.js';

describe('sandboxConfigFromEnv', () => {
  it('reads the cgroup and network settings', () => {
    const c = sandboxConfigFromEnv({
      SANDBOX_CPUS: '0.5',
      SANDBOX_REQUIRE_CGROUP: 'true',
      SANDBOX_CGROUP_PARENT: 'sandboxes',
      SANDBOX_NETWORK_ALLOW: 'pypi.org, 10.1.0.0/16:8080',
    });
    expect(c.cpus).toBe(0.5);
    expect(c.requireCgroup).toBe(true);
    expect(c.cgroupParent).toBe('sandboxes');
    expect(c.cgroupRoot).toBe('/sys/fs/cgroup');
    expect(c.networkAllow.map((e) => [e.kind, e.text, e.port])).toEqual([
      ['host', 'pypi.org', undefined],
      ['range', '10.1.0.0/16:8080', 8080],
    ]);
    expect(c.limits.maxProcesses).toBe(128);
  });

  it('defaults to no network, no CPU quota and a prlimit fallback', () => {
    const c = sandboxConfigFromEnv({});
    expect(c.networkAllow).toEqual([]);
    expect(c.cpus).toBeUndefined();
    expect(c.requireCgroup).toBe(false);
  });

  it('names the bad variable', () => {
    expect(() => sandboxConfigFromEnv({ SANDBOX_NETWORK_ALLOW: 'http://x' })).toThrow(/^Invalid SANDBOX_NETWORK_ALLOW entry "http:\/\/x"/);
    expect(() => sandboxConfigFromEnv({ SANDBOX_CPUS: 'lots' })).toThrow('SANDBOX_CPUS: expected a number of cores from 0.01 to 1024, got "lots"');
    expect(() => sandboxConfigFromEnv({ SANDBOX_CGROUP_PARENT: '../escape' })).toThrow(/^SANDBOX_CGROUP_PARENT: expected a relative path/);
    expect(() => sandboxConfigFromEnv({ SANDBOX_REQUIRE_CGROUP: 'maybe' })).toThrow('SANDBOX_REQUIRE_CGROUP: expected true or false, got "maybe"');
  });
});
