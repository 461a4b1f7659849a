import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSkillSandboxConfig } from './config.js';
import { UNSHARE_ARGS } from './runner.js';
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

/** A script that leaves a mark in the workspace (so a refused call can be shown not to have run it) and greets. */
const MARKER = {
  ...HELLO,
  'hello/scripts/mark.py': 'open("outputs/ran.txt", "w").write("ran")\nprint("marked")\n',
  'docs-only/SKILL.md': '---\nname: docs-only\ndescription: instructions, no scripts\n---\n# Docs only\n\nRead me.\n',
};

/** Executables that exist but fail as a default container seccomp profile makes them fail. */
async function blockedBinaries(): Promise<{ bwrap: string; unshare: string } & AsyncDisposable> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'skill-blocked-'));
  const bwrap = path.join(dir, 'bwrap');
  const unshare = path.join(dir, 'unshare');
  await writeFile(bwrap, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', { mode: 0o755 });
  await writeFile(unshare, '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n', { mode: 0o755 });
  return { bwrap, unshare, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}

/** Whether this machine lets an unprivileged process create the namespaces the unshare fallback uses. */
const UNSHARE_WORKS = (() => {
  try {
    execFileSync('unshare', [...UNSHARE_ARGS, 'true'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
})();

describe('SKILL_SCRIPT_ISOLATION=auto (the default) without bubblewrap', () => {
  it.each([
    ['bwrap is missing', (_b: { bwrap: string }) => ({ SANDBOX_BWRAP: '/nonexistent/bwrap' }), /\/nonexistent\/bwrap is missing/],
    [
      'bwrap cannot create namespaces',
      (b: { bwrap: string }) => ({ SANDBOX_BWRAP: b.bwrap }),
      /bwrap cannot create its namespaces here: bwrap: No permissions/,
    ],
  ])('%s: the service starts, SKILL.md and script-less skills load, and every script is refused saying what to do', async (_what, env, reason) => {
    await using blocked = await blockedBinaries();
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: MARKER, env: env(blocked) });
    expect(h.sandbox.isolation.mode).toBe('unavailable');
    expect(h.sandbox.isolation.reason).toMatch(reason);
    const res = await h.execute('run_skill_script', { skill_id: 'hello', script_name: 'mark.py' });
    expect(res.error).toMatchObject({ code: 'UNAVAILABLE', retryable: false });
    expect(res.content).toMatch(/^Error: Skill scripts are disabled on this skill sandbox: they run only in bubblewrap, and /);
    expect(res.content).toMatch(reason);
    // What the operator can change is in the log, not told to the model (nor through it to users).
    expect(res.content).not.toContain('SKILL_SCRIPT_ISOLATION');
    expect(res.content).toContain('the operator must enable bubblewrap');
    expect(existsSync(path.join(h.workspace(), 'outputs', 'ran.txt'))).toBe(false);
    // Everything but scripts goes on.
    expect((await h.execute('skill', { skill: 'hello' })).content).toMatch(/^# Skill hello/);
    expect((await h.execute('skill', { skill: 'docs-only' })).content).toContain('Read me.');
    expect((await h.listSkills('acme')).skills.map((s) => s.id)).toEqual(['docs-only', 'hello']);
    expect((await h.listTools('acme')).tools.map((t) => t.name)).toEqual(['skill', 'run_skill_script']);
  });

  it('does not fall back to unshare even where unshare works (it would show the script every workspace)', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: MARKER, env: { SANDBOX_BWRAP: '/nonexistent/bwrap' } });
    expect(h.sandbox.capabilities.unshare).toBeUndefined();
    expect(h.sandbox.isolation.mode).toBe('unavailable');
  });

  it('a stopped service runs no script until a start decides again (no stale bubblewrap sandbox is trusted)', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: MARKER });
    const before = h.sandbox.isolation.mode;
    await h.sandbox.stop();
    expect(h.sandbox.isolation).toMatchObject({ mode: 'unavailable', sandbox: undefined });
    await h.sandbox.start();
    expect(h.sandbox.isolation.mode).toBe(before);
  });

  it('nor where unshare is blocked too: no script runs without namespaces unless SKILL_SCRIPT_ISOLATION=none says so', async () => {
    await using blocked = await blockedBinaries();
    await using h = await startSandboxHarness({
      copyProjectSkills: false,
      files: MARKER,
      env: { SANDBOX_BWRAP: blocked.bwrap, SKILL_UNSHARE: blocked.unshare },
    });
    expect(h.sandbox.isolation.mode).toBe('unavailable');
    expect((await h.execute('run_skill_script', { skill_id: 'hello', script_name: 'mark.py' })).error).toMatchObject({ code: 'UNAVAILABLE' });
    expect(existsSync(path.join(h.workspace(), 'outputs', 'ran.txt'))).toBe(false);
  });

  it('SKILL_SANDBOX_REQUIRE_BWRAP=true refuses to start instead', async () => {
    await expect(
      startSandboxHarness({ copyProjectSkills: false, files: HELLO, env: { SANDBOX_BWRAP: '/nonexistent/bwrap', SKILL_SANDBOX_REQUIRE_BWRAP: 'true' } }),
    ).rejects.toThrow(/SKILL_SANDBOX_REQUIRE_BWRAP: skill scripts must run in bubblewrap, but .*\/nonexistent\/bwrap is missing/);
  });
});

describe('SKILL_SCRIPT_ISOLATION=namespaces without bubblewrap', () => {
  it.skipIf(!UNSHARE_WORKS)('runs scripts under unshare (the operator chose it), which hides no file: why auto never picks it', async () => {
    await using h = await startSandboxHarness({
      copyProjectSkills: false,
      files: { ...MARKER, 'hello/scripts/cat.py': 'import sys\nprint(open(sys.argv[1]).read())\n' },
      env: { SANDBOX_BWRAP: '/nonexistent/bwrap', SKILL_SCRIPT_ISOLATION: 'namespaces' },
    });
    expect(h.sandbox.isolation.mode).toBe('unshare');
    expect(h.sandbox.capabilities.unshare).toBeDefined();
    const res = await h.execute('run_skill_script', { skill_id: 'hello', script_name: 'hello.py', args: ['world'] });
    expect(res.content).toBe('hello world');
    // The documented trade-off (README "Skills"): another tenant's workspace is readable here.
    const otherTenant = path.join(h.workspace('globex', 'th-9'), 'outputs', 'secret.txt');
    await mkdir(path.dirname(otherTenant), { recursive: true });
    await writeFile(otherTenant, 'globex only');
    expect((await h.execute('run_skill_script', { skill_id: 'hello', script_name: 'cat.py', args: [otherTenant] })).content).toBe('globex only');
  });

  it.each([
    ['blocked', (b: { unshare: string }) => b.unshare],
    ['missing', () => '/nonexistent/unshare'],
  ])('refuses to start when unshare is %s too', async (_what, unshare) => {
    await using blocked = await blockedBinaries();
    await expect(
      startSandboxHarness({
        copyProjectSkills: false,
        files: HELLO,
        env: { SANDBOX_BWRAP: blocked.bwrap, SKILL_UNSHARE: unshare(blocked), SKILL_SCRIPT_ISOLATION: 'namespaces' },
      }),
    ).rejects.toThrow(
      /SKILL_SCRIPT_ISOLATION: namespaces are required but neither bubblewrap \(bwrap cannot create its namespaces here.*\) nor unshare\(1\) can create them here/,
    );
  });
});

describe('SKILL_SCRIPT_ISOLATION=none', () => {
  it('runs scripts without namespaces, as the operator said (and says so)', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: MARKER, env: { SKILL_SCRIPT_ISOLATION: 'none' } });
    expect(h.sandbox.isolation).toMatchObject({ mode: 'none', reason: 'SKILL_SCRIPT_ISOLATION=none' });
    expect((await h.execute('run_skill_script', { skill_id: 'hello', script_name: 'mark.py' })).content).toBe('marked');
    expect(await readFile(path.join(h.workspace(), 'outputs', 'ran.txt'), 'utf8')).toBe('ran');
  });

  it('contradicts SKILL_SANDBOX_REQUIRE_BWRAP=true', async () => {
    await expect(
      startSandboxHarness({ copyProjectSkills: false, files: HELLO, env: { SKILL_SCRIPT_ISOLATION: 'none', SKILL_SANDBOX_REQUIRE_BWRAP: 'true' } }),
    ).rejects.toThrow(/SKILL_SANDBOX_REQUIRE_BWRAP=true contradicts SKILL_SCRIPT_ISOLATION=none/);
  });
});

describe('a script under the default isolation (bubblewrap)', () => {
  it("cannot read another tenant's workspace nor the private folders under <WORKSPACE_ROOT>/.agentloop/, by host path or relative to its own", async () => {
    await using h = await startSandboxHarness({
      copyProjectSkills: false,
      files: {
        'peek/SKILL.md': '---\nname: peek\ndescription: tries to read what is not its own\n---\n# Peek\n',
        'peek/scripts/peek.py': [
          'import json, os, sys',
          'out = {}',
          'for name, p in json.load(sys.stdin).items():',
          '    try:',
          '        out[name] = open(p).read() if os.path.isfile(p) else sorted(os.listdir(p))',
          '    except Exception as e:',
          '        out[name] = type(e).__name__',
          'print(json.dumps(out, sort_keys=True))',
        ].join('\n'),
      },
    });
    expect(h.sandbox.isolation.mode, 'skill scripts run only in bubblewrap (scripts/test-prerequisites.sh installs it)').toBe('bubblewrap');
    const otherTenant = path.join(h.workspace('globex', 'th-9'), 'outputs', 'secret.txt');
    await mkdir(path.dirname(otherTenant), { recursive: true });
    await writeFile(otherTenant, 'globex only');
    const privateFile = path.join(h.workspaceRoot, '.agentloop', 'acme', 'th-1', 'effects', 'entry.json');
    await mkdir(path.dirname(privateFile), { recursive: true });
    await writeFile(privateFile, '{"private": true}');
    const res = await h.execute('run_skill_script', {
      skill_id: 'peek',
      script_name: 'peek.py',
      args: {
        other_tenant_host: otherTenant,
        other_tenant_relative: '../../globex/th-9/outputs/secret.txt',
        workspace_root_host: h.workspaceRoot,
        private_host: privateFile,
        private_root_relative: '../../.agentloop',
        own_private_relative: '../../.agentloop/acme/th-1/effects/entry.json',
      },
    });
    expect(res.error, res.content).toBeUndefined();
    expect(JSON.parse(res.content)).toEqual({
      other_tenant_host: 'FileNotFoundError',
      other_tenant_relative: 'FileNotFoundError',
      workspace_root_host: 'FileNotFoundError',
      private_host: 'FileNotFoundError',
      private_root_relative: 'FileNotFoundError',
      own_private_relative: 'FileNotFoundError',
    });
  });
});
