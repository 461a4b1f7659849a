import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from '../testing/index.js';

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
