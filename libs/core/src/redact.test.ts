import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PathRedactor, pathRootVariants, processPathRoots } from './redact.js';

const r = new PathRedactor([
  { path: '/srv/agentloop', label: '<app>' },
  { path: '/srv/agentloop/data', label: '<data>' },
  { path: '/srv/agentloop/data/workspaces', label: '<workspace-root>' },
  { path: '/srv/agentloop/data/workspaces/acme/t1', label: '' },
  { path: '/srv/agentloop/skills/pdf', label: 'skills/pdf' },
  { path: '/tmp', label: '<tmp>' },
]);

describe('PathRedactor', () => {
  it('maps each path to the longest root that holds it', () => {
    expect(r.redact("ENOENT: no such file or directory, open '/srv/agentloop/data/workspaces/acme/t1/uploads/a.csv'")).toBe(
      "ENOENT: no such file or directory, open 'uploads/a.csv'",
    );
    expect(r.redact('/srv/agentloop/data/workspaces/globex/t9/x')).toBe('<workspace-root>/globex/t9/x');
    expect(r.redact('db at /srv/agentloop/data/agentloop.sqlite')).toBe('db at <data>/agentloop.sqlite');
    expect(r.redact('File "/srv/agentloop/skills/pdf/scripts/x.py", line 3')).toBe('File "skills/pdf/scripts/x.py", line 3');
    expect(r.redact('/srv/agentloop/node_modules/x/index.js:10:5')).toBe('<app>/node_modules/x/index.js:10:5');
  });

  it('shows the workspace itself as "." and redacts every occurrence', () => {
    expect(r.redact('cwd=/srv/agentloop/data/workspaces/acme/t1 and /tmp/a, /tmp/b')).toBe('cwd=. and <tmp>/a, <tmp>/b');
  });

  it('only matches whole segments at the start of a path', () => {
    expect(r.redact('/srv/agentloop2/x /var/tmp/y /tmpfile /srv/agentloop.bak')).toBe('/srv/agentloop2/x /var/tmp/y /tmpfile /srv/agentloop.bak');
    expect(r.redact('under /srv/agentloop.')).toBe('under <app>.');
  });

  it('redacts file:// URLs and colon-separated path lists', () => {
    expect(r.redact('at file:///srv/agentloop/skills/pdf/scripts/a.mjs:1')).toBe('at skills/pdf/scripts/a.mjs:1');
    expect(r.redact('PYTHONPATH=/srv/agentloop/data/deps:/tmp/x')).toBe('PYTHONPATH=<data>/deps:<tmp>/x');
  });

  it('never treats "/" or relative paths as roots', () => {
    const none = new PathRedactor([
      { path: '/', label: 'x' },
      { path: 'relative/dir', label: 'y' },
    ]);
    expect(none.list()).toEqual([]);
    expect(none.redact('/etc/passwd relative/dir')).toBe('/etc/passwd relative/dir');
  });

  it('with() adds roots that win over existing labels for the same path', () => {
    const more = r.with([{ path: '/tmp', label: '<script-home>' }]);
    expect(more.redact('/tmp/a')).toBe('<script-home>/a');
    expect(r.redact('/tmp/a')).toBe('<tmp>/a');
  });
});

describe('pathRootVariants', () => {
  it('adds the real path of a root behind a symlink, and keeps a missing root as given', () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'redact-')));
    try {
      mkdirSync(path.join(dir, 'real'));
      symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
      expect(pathRootVariants(path.join(dir, 'link'), '<x>')).toEqual([
        { path: path.join(dir, 'link'), label: '<x>' },
        { path: path.join(dir, 'real'), label: '<x>' },
      ]);
      expect(pathRootVariants(path.join(dir, 'missing'), '<m>')).toEqual([{ path: path.join(dir, 'missing'), label: '<m>' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('processPathRoots covers the cwd, the temp folder and the home folder', () => {
    const redactor = new PathRedactor(processPathRoots());
    expect(redactor.redact(path.join(process.cwd(), 'x'))).toMatch(/^(<app>|~)\/x$/);
    expect(redactor.redact(path.join(tmpdir(), 'agentloop-skill-1', 'f'))).toBe('<tmp>/agentloop-skill-1/f');
    expect(redactor.redact(path.join(homedir(), '.npm', 'x'))).toMatch(/^(~|<app>)\/\.npm\/x$/);
  });
});
