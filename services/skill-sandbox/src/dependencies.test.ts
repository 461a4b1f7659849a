import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '@agentloop/core';
import { SkillRegistry, type Skill } from '@agentloop/skills';
import { DependencyInstaller } from './dependencies.js';
import { probePython } from './runner.js';

const logger = createLogger({ service: 'test', level: 'silent' });
let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'agentloop-deps-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

async function skillWith(files: Record<string, string>, version = '1.2'): Promise<Skill> {
  const dir = path.join(root, 'skills', 'pdf');
  await mkdir(path.join(dir, 'scripts'), { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), `---\nname: pdf\ndescription: PDFs\nmetadata:\n  version: "${version}"\n---\n`);
  for (const [rel, text] of Object.entries(files)) await writeFile(path.join(dir, rel), text);
  return (await SkillRegistry.scan(path.join(root, 'skills'))).get('pdf')!;
}

/** A stand-in for python that records each `pip install` and takes a while, so two installs would overlap. */
async function countingPython(): Promise<{ executable: string; calls: () => Promise<number> }> {
  const log = path.join(root, 'pip-calls.log');
  const executable = path.join(root, 'fake-python');
  await writeFile(
    executable,
    [
      '#!/bin/sh',
      'target=""',
      'while [ $# -gt 0 ]; do if [ "$1" = "--target" ]; then target="$2"; fi; shift; done',
      `echo run >> ${log}`,
      'sleep 0.5',
      'mkdir -p "$target/fakepkg" && echo "VALUE = 1" > "$target/fakepkg/__init__.py"',
    ].join('\n'),
  );
  await chmod(executable, 0o755);
  return { executable, calls: async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean).length };
}

describe('DependencyInstaller', () => {
  it('installs once per skill version into <cache>/<skill>@<version>-<hash>/python, even for two replicas at once (lock file)', async () => {
    const skill = await skillWith({ 'requirements.txt': 'fakepkg\n' });
    const fake = await countingPython();
    const cacheRoot = path.join(root, 'cache');
    const replica = () =>
      new DependencyInstaller({
        cacheRoot,
        python: async () => ({ executable: fake.executable, version: '3.11', roots: [] }),
        timeoutMs: 30_000,
        binaryOnly: false,
        logger,
        env: {},
      });
    const [a, b] = await Promise.all([replica().ensure(skill), replica().ensure(skill)]);
    expect(a).toEqual(b);
    expect(a.installed).toBe(true);
    expect(path.relative(cacheRoot, a.pythonDir!)).toMatch(/^pdf@1\.2-[0-9a-f]{16}\/python$/);
    expect(await readFile(path.join(a.pythonDir!, 'fakepkg', '__init__.py'), 'utf8')).toContain('VALUE');
    expect(await fake.calls()).toBe(1);
    // Later loads use the cache; the lock is gone.
    expect(await replica().ensure(skill)).toEqual(a);
    expect(await fake.calls()).toBe(1);
    expect((await readdir(cacheRoot)).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it('a new version is a new cache entry', async () => {
    const fake = await countingPython();
    const cacheRoot = path.join(root, 'cache');
    const installer = new DependencyInstaller({
      cacheRoot,
      python: async () => ({ executable: fake.executable, version: '3.11', roots: [] }),
      timeoutMs: 30_000,
      binaryOnly: false,
      logger,
      env: {},
    });
    const v1 = await installer.ensure(await skillWith({ 'requirements.txt': 'fakepkg\n' }, '1.0'));
    const v2 = await installer.ensure(await skillWith({ 'requirements.txt': 'fakepkg\n' }, '2.0'));
    expect(v1.pythonDir).toContain('pdf@1.0-');
    expect(v2.pythonDir).toContain('pdf@2.0-');
    expect(await fake.calls()).toBe(2);
  });

  it('says clearly when a package is not available from the configured index', async () => {
    const python = await probePython('python3');
    if (!python) return expect.fail('python3 is required for this test');
    const skill = await skillWith({ 'requirements.txt': '--no-index\nagentloop-offline-package==1.0\n' });
    const installer = new DependencyInstaller({
      cacheRoot: path.join(root, 'cache'),
      python: async () => python,
      timeoutMs: 60_000,
      binaryOnly: true,
      logger,
      env: {},
    });
    const status = await installer.ensure(skill);
    expect(status.installed).toBe(false);
    expect(status.warning).toMatch(
      /^Dependencies of skill pdf \(skills\/pdf\/requirements\.txt\) could not be installed: a package is not available from the configured index; configure the index for the skill sandbox \(PIP_INDEX_URL/,
    );
  });

  it('installs a real requirements.txt (pypdf) from the index pip is configured with', async (ctx) => {
    const python = await probePython('python3');
    if (!python) return ctx.skip('python3 is not installed');
    try {
      execFileSync(python.executable, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', path.join(root, 'probe'), 'pypdf'], {
        stdio: 'ignore',
        timeout: 120_000,
      });
    } catch {
      return ctx.skip('pip cannot find pypdf on this machine (no index configured or offline)');
    }
    const skill = await skillWith({ 'requirements.txt': 'pypdf\n' });
    const installer = new DependencyInstaller({
      cacheRoot: path.join(root, 'cache'),
      python: async () => python,
      timeoutMs: 120_000,
      binaryOnly: true,
      logger,
    });
    const status = await installer.ensure(skill);
    expect(status.warning).toBeUndefined();
    const out = execFileSync(python.executable, ['-c', 'import pypdf, sys; print(pypdf.__file__.startswith(sys.argv[1]))', status.pythonDir!], {
      env: { PYTHONPATH: status.pythonDir!, PATH: '/usr/bin:/bin' },
    }).toString();
    expect(out.trim()).toBe('True');
  });
});
