import { promises as fsp } from 'node:fs';
import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from '../testing/index.js';
import { createFindFilesTool } from './find-files.js';

let h: ToolHarness;

/** Writes a file with a fixed mtime (seconds since epoch) so ordering never depends on the clock. */
async function put(rel: string, data: string, mtimeSec: number): Promise<void> {
  const abs = path.join(h.workspace.root, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, data);
  await utimes(abs, mtimeSec, mtimeSec);
}

beforeEach(async () => {
  h = await createToolHarness();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h[Symbol.asyncDispose]();
});

const paths = (content: string) =>
  content
    .split('\n')
    .slice(1)
    .filter((l) => !l.startsWith('('))
    .map((l) => l.replace(/ \(.*$/, ''));

describe('find_files', () => {
  it('lists matches newest first with sizes', async () => {
    await put('uploads/old.txt', 'old', 1_700_000_000);
    await put('outputs/new.txt', 'newest!', 1_700_000_200);
    await put('temp/mid.txt', 'mid', 1_700_000_100);
    const res = await h.call('find_files', { pattern: '**/*.txt' });
    expect(res.error).toBeUndefined();
    const lines = res.content.split('\n');
    expect(lines[0]).toBe("Found 3 files matching '**/*.txt' in . (newest first):");
    expect(lines[1]).toBe('outputs/new.txt (7 bytes, modified 2023-11-14 22:16:40 UTC)');
    expect(paths(res.content)).toEqual(['outputs/new.txt', 'temp/mid.txt', 'uploads/old.txt']);
  });

  it('searches one folder given by path and reports workspace-relative paths', async () => {
    await put('uploads/report-q1.pdf', 'x', 1_700_000_000);
    await put('uploads/sub/report-q2.pdf', 'x', 1_700_000_100);
    await put('outputs/report.pdf', 'x', 1_700_000_200);
    const res = await h.call('find_files', { pattern: '*report*', path: 'uploads' });
    expect(paths(res.content)).toEqual(['uploads/report-q1.pdf']);
    const deep = await h.call('find_files', { pattern: '**/*report*', path: 'uploads' });
    expect(paths(deep.content)).toEqual(['uploads/sub/report-q2.pdf', 'uploads/report-q1.pdf']);
  });

  it('excludes hidden files, hidden folders and .indexes', async () => {
    await put('uploads/visible.md', 'x', 1_700_000_000);
    await put('uploads/.secret.md', 'x', 1_700_000_000);
    await put('uploads/.cache/a.md', 'x', 1_700_000_000);
    await put('uploads/.indexes/b.md', 'x', 1_700_000_000);
    const all = await h.call('find_files', { pattern: '**/*.md' });
    expect(paths(all.content)).toEqual(['uploads/visible.md']);
    const explicit = await h.call('find_files', { pattern: '**/.*/*.md' });
    expect(explicit.content).toBe("No files matching '**/.*/*.md' in .");
  });

  it('caps the list and says so', async () => {
    await h[Symbol.asyncDispose]();
    h = await createToolHarness({ env: { FIND_MAX_RESULTS: '2' } });
    for (let i = 0; i < 5; i++) await put(`outputs/f${i}.txt`, 'x', 1_700_000_000 + i);
    const res = await h.call('find_files', { pattern: '**/*.txt' });
    expect(paths(res.content)).toEqual(['outputs/f4.txt', 'outputs/f3.txt']);
    expect(res.content.split('\n')[0]).toBe("Found 5 files matching '**/*.txt' in . (newest first):");
    expect(res.content).toContain('(Showing the 2 newest of 5 matches; narrow the pattern or the path to see the others.)');
  });

  it('breaks mtime ties by path', async () => {
    await put('outputs/b.txt', 'x', 1_700_000_000);
    await put('outputs/a.txt', 'x', 1_700_000_000);
    expect(paths((await h.call('find_files', { pattern: '**/*.txt' })).content)).toEqual(['outputs/a.txt', 'outputs/b.txt']);
  });

  it.each(['../*', '**/../../etc/*', '/etc/*', '{1..3}.txt'])('refuses the pattern %s', async (pattern) => {
    const res = await h.call('find_files', { pattern });
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    expect(res.content).toMatch(/^Error: Invalid pattern: /);
  });

  it('refuses a search path outside the workspace', async () => {
    const res = await h.call('find_files', { pattern: '*', path: '../..' });
    expect(res.content).toBe('Error: Path outside workspace: ../..');
  });

  it('does not descend into or report symlinks leaving the workspace', async () => {
    const outside: TempDir = await createTempDir('agentloop-outside-');
    try {
      await writeFile(path.join(outside.path, 'secret.txt'), 'secret');
      await symlink(outside.path, path.join(h.workspace.root, 'uploads', 'dir-link'));
      await symlink(path.join(outside.path, 'secret.txt'), path.join(h.workspace.root, 'uploads', 'file-link.txt'));
      await put('uploads/mine.txt', 'x', 1_700_000_000);
      const res = await h.call('find_files', { pattern: '**/*.txt' });
      expect(paths(res.content)).toEqual(['uploads/mine.txt']);
      const through = await h.call('find_files', { pattern: '*', path: 'uploads/dir-link' });
      expect(through.content).toBe('Error: Path outside workspace: uploads/dir-link');
    } finally {
      await outside[Symbol.asyncDispose]();
    }
  });

  it('says when nothing matches', async () => {
    expect((await h.call('find_files', { pattern: '*.pdf', path: 'uploads' })).content).toBe("No files matching '*.pdf' in uploads/");
  });

  it('reports a missing search folder', async () => {
    expect((await h.call('find_files', { pattern: '*', path: 'nope' })).content).toBe('Error: Directory not found: nope');
  });
});

describe('find_files: bounded whatever the tenant controls (issue 18)', () => {
  it('matches a backtracking pattern against long file names without freezing (picomatch: seconds per name)', async () => {
    const long = 'a'.repeat(200);
    for (let i = 0; i < 20; i++) await put(`uploads/${long}${i}`, 'x', 1_700_000_000);
    const pattern = `${'*a'.repeat(12)}b`;
    const res = await h.call('find_files', { pattern, path: 'uploads' });
    expect(res.content).toBe(`No files matching '${pattern}' in uploads/`);
  });

  it('supports braces, classes and ? like the glob it replaces', async () => {
    await put('uploads/a.md', 'x', 1_700_000_002);
    await put('uploads/b.txt', 'x', 1_700_000_001);
    await put('uploads/cc.txt', 'x', 1_700_000_000);
    expect(paths((await h.call('find_files', { pattern: '*.{md,txt}', path: 'uploads' })).content)).toEqual([
      'uploads/a.md',
      'uploads/b.txt',
      'uploads/cc.txt',
    ]);
    expect(paths((await h.call('find_files', { pattern: '?.txt', path: 'uploads' })).content)).toEqual(['uploads/b.txt']);
    expect(paths((await h.call('find_files', { pattern: '**/[ab].*' })).content)).toEqual(['uploads/a.md', 'uploads/b.txt']);
  });

  it.each([
    ['a'.repeat(300), /^Error: Invalid pattern: a{80}…: 300 characters, more than the 256 allowed; use a simpler pattern$/],
    ['{a,b}'.repeat(8), /: its braces expand to more than 64 patterns; use a simpler pattern$/],
  ])('refuses an oversized pattern (%#) with the limit in the message', async (pattern, message) => {
    const res = await h.call('find_files', { pattern });
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    expect(res.content).toMatch(message);
  });

  it('refuses a 200 KB search path with the limit, without a filesystem walk', async () => {
    const opendir = vi.spyOn(fsp, 'opendir');
    const res = await h.call('find_files', { pattern: '*', path: `uploads/${'a/'.repeat(100_000)}` });
    expect(res.content).toMatch(/^Error: Path too long: 200008 bytes, more than the 4096 allowed \(Linux PATH_MAX\); use a shorter path: uploads\/a\/a/);
    expect(opendir).not.toHaveBeenCalled();
  });

  it('does not open folders the pattern cannot match', async () => {
    for (let i = 0; i < 5; i++) await put(`outputs/deep${i}/x.txt`, 'x', 1_700_000_000);
    await put('uploads/in.txt', 'x', 1_700_000_000);
    const opendir = vi.spyOn(fsp, 'opendir');
    const res = await h.call('find_files', { pattern: 'uploads/*.txt' });
    expect(paths(res.content)).toEqual(['uploads/in.txt']);
    // The workspace root and uploads/ only.
    expect(opendir).toHaveBeenCalledTimes(2);
  });

  it('stops after reading its maximum of entries and says so', async () => {
    h.registry.register({ ...createFindFilesTool({ maxResults: 100, maxScanned: 5 }), name: 'find_files_small' });
    for (let i = 0; i < 10; i++) await put(`temp/f${i}.txt`, 'x', 1_700_000_000 + i);
    const res = await h.call('find_files_small', { pattern: '*.txt', path: 'temp' });
    expect(res.content.split('\n')[0]).toBe("Found 5 files matching '*.txt' in temp/ (newest first):");
    expect(res.content).toMatch(/\n\(Stopped after reading 5 entries of temp\/; there may be more matches: narrow the path\.\)$/);
  });

  it('stops walking when the call runs out of time', async () => {
    for (let i = 0; i < 30; i++) await put(`temp/d${i}/f.txt`, 'x', 1_700_000_000);
    const ctrl = new AbortController();
    let opened = 0;
    const real = fsp.opendir.bind(fsp);
    vi.spyOn(fsp, 'opendir').mockImplementation(async (...args: Parameters<typeof fsp.opendir>) => {
      // The budget ends while the walk is in the third folder.
      if (++opened === 3) ctrl.abort();
      return real(...args);
    });
    const res = await h.call('find_files', { pattern: '**/*.txt', path: 'temp' }, { signal: ctrl.signal });
    expect(res.error?.code).toBe('TIMEOUT');
    // Give an abandoned walk a chance to go on, then check it did not.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(opened).toBe(3);
  });
});
