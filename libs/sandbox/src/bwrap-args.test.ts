import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('bwrapArgs', () => {
  it('mounts a passwd and group of the sandbox user, written to a folder the process removes when it exits', () => {
    // A process of its own, so its exit is observable from here.
    const script = `
      import { bwrapArgs } from ${JSON.stringify(path.join(here, 'bwrap-args.ts'))};
      const args = bwrapArgs({ workspaceDir: '/tmp', argv: ['true'] });
      const passwd = args[args.indexOf('/etc/passwd') - 1];
      const fs = await import('node:fs');
      console.log(JSON.stringify({ passwd, content: fs.readFileSync(passwd, 'utf8') }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    const { passwd, content } = JSON.parse(out.trim().split('\n').at(-1)!) as { passwd: string; content: string };
    expect(content).toMatch(/^sandbox:x:/);
    expect(path.basename(path.dirname(passwd))).toMatch(/^agentloop-sandbox-identity-/);
    expect(existsSync(path.dirname(passwd))).toBe(false);
  });
});
