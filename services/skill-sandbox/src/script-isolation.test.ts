import { describe, expect, it } from 'vitest';
import { loadSkillSandboxConfig } from './config.js';
import { skillSandboxConfig } from './script-isolation.js';
import { startSandboxHarness } from './testing/index.js';

const HELLO = {
  'hello/SKILL.md': '---\nname: hello\ndescription: prints a greeting\n---\n# Hello\n',
  'hello/scripts/hello.py': 'import sys\nprint("hello", *sys.argv[1:])\n',
};

describe('skillSandboxConfig', () => {
  it('takes the limits from SKILL_SCRIPT_*, the network from SKILL_NETWORK_ALLOW, and the cgroup placement from SANDBOX_*', () => {
    const config = loadSkillSandboxConfig({
      SKILL_SCRIPT_TIMEOUT_MS: '5000',
      SKILL_SCRIPT_MAX_MEMORY_MB: '0',
      SKILL_SCRIPT_MAX_PROCESSES: '32',
      SKILL_SCRIPT_MAX_FILE_MB: '10',
      SKILL_SCRIPT_MAX_OUTPUT_BYTES: '2048',
      SKILL_SCRIPT_CPUS: '0.5',
      SKILL_NETWORK_ALLOW: 'pypi.org:443',
      SANDBOX_CGROUP_PARENT: 'skills',
      SANDBOX_BWRAP: '/opt/bwrap',
    });
    const c = skillSandboxConfig(config, '/opt/skills-python/bin/python3');
    expect(c).toMatchObject({
      enabled: true,
      bwrapPath: '/opt/bwrap',
      cgroupParent: 'skills',
      cpus: 0.5,
      pythonPath: '/opt/skills-python/bin/python3',
      limits: { wallTimeMs: 5000, memoryBytes: 1024 ** 4, cpuSeconds: 6, maxProcesses: 32, maxFileBytes: 10 * 1024 * 1024, maxOutputBytes: 4096 },
    });
    expect(c.networkAllow.map((e) => e.text)).toEqual(['pypi.org:443']);
  });

  it('refuses a bad SKILL_NETWORK_ALLOW at boot, naming it', () => {
    expect(() => loadSkillSandboxConfig({ SKILL_NETWORK_ALLOW: 'http://not a host' })).toThrow(/SKILL_NETWORK_ALLOW/);
  });
});

describe('without bubblewrap', () => {
  it('falls back to the earlier runner, says why, and scripts still run', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: HELLO, env: { SANDBOX_BWRAP: '/nonexistent/bwrap' } });
    expect(h.sandbox.isolation.mode).not.toBe('bubblewrap');
    expect(h.sandbox.isolation.reason).toMatch(/\/nonexistent\/bwrap is missing/);
    const res = await h.execute('run_skill_script', { skill_id: 'hello', script_name: 'hello.py', args: ['world'] });
    expect(res.content).toBe('hello world');
  });

  it('SKILL_SANDBOX_REQUIRE_BWRAP=true refuses to start instead', async () => {
    await expect(
      startSandboxHarness({ copyProjectSkills: false, files: HELLO, env: { SANDBOX_BWRAP: '/nonexistent/bwrap', SKILL_SANDBOX_REQUIRE_BWRAP: 'true' } }),
    ).rejects.toThrow(/SKILL_SANDBOX_REQUIRE_BWRAP: skill scripts must run in bubblewrap, but .*\/nonexistent\/bwrap is missing/);
  });
});
