import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs `code` with createLogger in scope in a child process; resolves with its stdout and exit code. */
function run(code: string): Promise<{ out: string; code: number | null }> {
  const script = `import { createLogger } from '@agentloop/core';\n${code}`;
  const c = spawn(process.execPath, ['--conditions=@agentloop/source', '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve) => c.on('close', (exitCode) => resolve({ out, code: exitCode })));
}

const messages = (out: string) =>
  out
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { service: string; msg: string }).msg);

describe('createLogger on standard output', () => {
  it('writes every line, in order across loggers, when the process exits right after logging', async () => {
    const { out, code } = await run(`
const a = createLogger({ service: 'a' });
const b = createLogger({ service: 'b' });
for (let i = 0; i < 2000; i++) (i % 2 ? b : a).info({ i }, 'line ' + i + ' ' + 'x'.repeat(200));
process.exit(3);`);
    expect(code).toBe(3);
    expect(messages(out)).toEqual(Array.from({ length: 2000 }, (_, i) => `line ${i} ${'x'.repeat(200)}`));
  });

  it('writes the lines of a turn when it ends, while the process goes on (a SIGKILL after it loses none of them)', async () => {
    const script = `import { createLogger } from '@agentloop/core';
const log = createLogger({ service: 'alive' });
log.info('first');
log.info('second');
setInterval(() => undefined, 1_000);`;
    const c = spawn(process.execPath, ['--conditions=@agentloop/source', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    const closed = new Promise((resolve) => c.on('close', resolve));
    await new Promise<void>((resolve) =>
      c.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.split('\n').length > 2) resolve();
      }),
    );
    c.kill('SIGKILL');
    await closed;
    expect(messages(out)).toEqual(['first', 'second']);
  });

  it('writes the lines logged before an uncaught exception ends the process', async () => {
    const { out, code } = await run(`
const log = createLogger({ service: 'crash' });
for (let i = 0; i < 500; i++) log.info('before ' + i);
setImmediate(() => { throw new Error('boom'); });`);
    expect(code).toBe(1);
    expect(messages(out)).toEqual(Array.from({ length: 500 }, (_, i) => `before ${i}`));
  });
});
