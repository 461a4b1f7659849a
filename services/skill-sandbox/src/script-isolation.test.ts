import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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

  it('takes the skills toolbox: its Python by default, mounted in every script sandbox; a missing one is refused naming SKILLS_TOOLBOX', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'skill-toolbox-'));
    try {
      expect(() => loadSkillSandboxConfig({ SKILLS_TOOLBOX: dir })).toThrow(/SKILLS_TOOLBOX: .*python\/bin\/python3 does not exist/);
      await mkdir(path.join(dir, 'python', 'bin'), { recursive: true });
      await writeFile(path.join(dir, 'python', 'bin', 'python3'), '');
      const config = loadSkillSandboxConfig({ SKILLS_TOOLBOX: dir });
      expect(config.SKILL_PYTHON).toBe(path.join(dir, 'python', 'bin', 'python3'));
      expect(skillSandboxConfig(config, undefined).toolbox?.dir).toBe(dir);
      // An explicit interpreter still wins; without a toolbox nothing is mounted.
      expect(loadSkillSandboxConfig({ SKILLS_TOOLBOX: dir, SKILL_PYTHON: '/usr/bin/python3' }).SKILL_PYTHON).toBe('/usr/bin/python3');
      expect(skillSandboxConfig(loadSkillSandboxConfig({}), undefined).toolbox).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
