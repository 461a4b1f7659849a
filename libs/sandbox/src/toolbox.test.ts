/**
 * The skills toolbox (SKILLS_TOOLBOX) inside the real bubblewrap sandbox: a toolbox laid out as
 * deploy/skills-toolbox/install.sh makes it (a venv in python/, packages in node/node_modules) is
 * what `python`, `python3` and `require()` find — read-only — while the host's other folders stay out.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArgs, Sandbox, sandboxConfigFromEnv, toolboxFromEnv } from './index.js';

const systemPython = ['/usr/bin/python3'].find((p) => existsSync(p));
const canRun = existsSync('/usr/bin/bwrap') && systemPython !== undefined;

describe('toolboxFromEnv', () => {
  it('is off without SKILLS_TOOLBOX and names the variable when the toolbox is not installed', async () => {
    expect(toolboxFromEnv({})).toBeUndefined();
    expect(() => toolboxFromEnv({ SKILLS_TOOLBOX: 'relative/dir' })).toThrow('SKILLS_TOOLBOX: expected an absolute path, got "relative/dir"');
    const empty = await mkdtemp(path.join(os.tmpdir(), 'toolbox-empty-'));
    try {
      expect(() => toolboxFromEnv({ SKILLS_TOOLBOX: empty })).toThrow(
        /SKILLS_TOOLBOX: .*python\/bin\/python3 does not exist: install the toolbox with deploy\/skills-toolbox\/install\.sh/,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canRun)('the toolbox inside the sandbox', () => {
  let dir: string;
  let workspace: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'toolbox-'));
    workspace = await mkdtemp(path.join(os.tmpdir(), 'toolbox-ws-'));
    execFileSync(systemPython!, ['-m', 'venv', '--without-pip', path.join(dir, 'python')]);
    // A package only the toolbox has, for each language.
    const site = execFileSync(path.join(dir, 'python', 'bin', 'python3'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], {
      encoding: 'utf8',
    }).trim();
    await writeFile(path.join(site, 'toolbox_probe.py'), 'WHERE = "toolbox"\n');
    await mkdir(path.join(dir, 'node', 'node_modules', 'toolbox-probe'), { recursive: true });
    await writeFile(path.join(dir, 'node', 'node_modules', 'toolbox-probe', 'index.js'), 'module.exports = "toolbox";\n');
    sandbox = new Sandbox(sandboxConfigFromEnv({ SKILLS_TOOLBOX: dir, SANDBOX_TIMEOUT_MS: '20000' }));
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(workspace, { recursive: true, force: true });
  });

  it('is the default Python of the code sandbox and mounted read-only', async () => {
    expect(sandbox.config.pythonPath).toBe(path.join(dir, 'python', 'bin', 'python3'));
    const args = bwrapArgs({ workspaceDir: workspace, argv: ['true'], toolbox: sandbox.config.toolbox! });
    const bind = args.findIndex((a, i) => a === '--ro-bind' && args[i + 1] === dir && args[i + 2] === dir);
    expect(bind).toBeGreaterThan(-1);
  });

  it('gives `python` on PATH with the toolbox packages, and node its modules on NODE_PATH', async () => {
    const res = await sandbox.run({
      workspaceDir: workspace,
      argv: [
        '/bin/sh',
        '-c',
        `python -c "import toolbox_probe, sys; print(toolbox_probe.WHERE, sys.prefix)" && ${process.execPath} -e "console.log(require('toolbox-probe'))" && (touch ${dir}/written 2>/dev/null && echo writable || echo read-only)`,
      ],
    });
    expect(res.stderr).toBe('');
    expect(res.stdout.trim().split('\n')).toEqual([`toolbox ${path.join(dir, 'python')}`, 'toolbox', 'read-only']);
  });

  it.skipIf(!existsSync('/usr/bin/soffice'))(
    'runs LibreOffice headless (a passwd entry for the sandbox user, its /etc settings)',
    async () => {
      await writeFile(path.join(workspace, 'note.txt'), 'Quarterly results\n');
      const res = await sandbox.run({
        workspaceDir: workspace,
        argv: ['/bin/sh', '-c', 'id -un && grep -c . /etc/passwd && soffice --headless --convert-to pdf note.txt >/dev/null 2>&1; head -c 5 note.pdf'],
      });
      // Only the sandbox user is known inside; the host's accounts are not.
      expect(res.stdout.split('\n').slice(0, 3)).toEqual(['sandbox', '1', '%PDF-']);
    },
    120_000,
  );
});
