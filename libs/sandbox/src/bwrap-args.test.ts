import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The passwd bwrapArgs mounts, as a process of its own with TMPDIR=`tmp` sees it. */
function passwdOfAProcess(tmp: string): { passwd: string; content: string } {
  const script = `
    import { bwrapArgs } from ${JSON.stringify(path.join(here, 'bwrap-args.ts'))};
    const fs = await import('node:fs');
    const args = bwrapArgs({ workspaceDir: '/tmp', argv: ['true'] });
    const passwd = args[args.indexOf('/etc/passwd') - 1];
    console.log(JSON.stringify({ passwd, content: fs.readFileSync(passwd, 'utf8') }));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: tmp },
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { passwd: string; content: string };
}

describe('bwrapArgs: the sandbox user passwd and group', () => {
  let tmp: string;
  const uid = process.getuid!();
  const shared = () => path.join(tmp, `agentloop-sandbox-identity-${uid}`);
  beforeEach(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'agentloop-identity-test-'));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it("are written once into one folder of this user's, closed to others, that every process reuses (none is left per process)", () => {
    const a = passwdOfAProcess(tmp);
    const b = passwdOfAProcess(tmp);
    expect(a.content).toMatch(/^sandbox:x:/);
    expect(path.dirname(a.passwd)).toBe(shared());
    expect(b.passwd).toBe(a.passwd);
    expect(statSync(shared()).mode & 0o777).toBe(0o700);
    // A file changed in it is put back as it must be.
    writeFileSync(a.passwd, 'root:x:0:0::/:/bin/sh\n');
    expect(passwdOfAProcess(tmp).content).toBe(a.content);
  });

  it('are written into a private folder, removed at exit, when the shared one is a link or open to others', () => {
    const elsewhere = path.join(tmp, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, shared());
    const viaLink = passwdOfAProcess(tmp);
    expect(path.dirname(viaLink.passwd)).not.toBe(shared());
    expect(viaLink.content).toMatch(/^sandbox:x:/);
    expect(existsSync(path.dirname(viaLink.passwd))).toBe(false);
    expect(existsSync(path.join(elsewhere, 'passwd'))).toBe(false);

    rmSync(shared());
    mkdirSync(shared());
    chmodSync(shared(), 0o777);
    const open = passwdOfAProcess(tmp);
    expect(path.dirname(open.passwd)).not.toBe(shared());
    expect(existsSync(path.join(shared(), 'passwd'))).toBe(false);
  });
});
