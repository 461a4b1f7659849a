import { describe, expect, it } from 'vitest';
import { cgroupCpuLimit } from './cpu-quota.js';

/** A fake /proc and /sys: the files given, nothing else. */
const files = (entries: Record<string, string>) => (file: string) => entries[file];

describe('cgroupCpuLimit', () => {
  it('reads cgroup v2 cpu.max of the process cgroup, the smallest of it and its ancestors', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
      '/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/kubepods/pod1/cpu.max': '150000 100000\n',
      '/sys/fs/cgroup/kubepods/cpu.max': '800000 100000\n',
    });
    expect(cgroupCpuLimit(read)).toBe(1.5);
  });

  it("reads a container's own namespace root (path /)", () => {
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '200000 100000' }))).toBe(2);
  });

  it('is undefined when the quota is max, missing, or the files are unreadable', () => {
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'max 100000' }))).toBeUndefined();
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '0::/user.slice\n' }))).toBeUndefined();
    expect(cgroupCpuLimit(files({}))).toBeUndefined();
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': 'garbage\n0::/\n', '/sys/fs/cgroup/cpu.max': 'x y' }))).toBeUndefined();
  });

  it('reads cgroup v1 cfs quota and period of the cpu hierarchy (-1: none)', () => {
    const v1 = (quota: string) =>
      files({
        '/proc/self/cgroup': '12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n',
        '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': quota,
        '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
      });
    expect(cgroupCpuLimit(v1('50000\n'))).toBe(0.5);
    expect(cgroupCpuLimit(v1('-1\n'))).toBeUndefined();
  });

  it('does not leave the cgroup mount through .. in a path', () => {
    const read = files({ '/proc/self/cgroup': '0::/../../etc\n', '/sys/fs/cgroup/etc/cpu.max': '100000 100000' });
    expect(cgroupCpuLimit(read)).toBe(1);
  });
});
