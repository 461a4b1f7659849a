import { promises as fsPromises } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from '../testing/index.js';

let h: ToolHarness;
const at = (rel: string) => path.join(h.workspace.root, rel);

beforeEach(async () => {
  h = await createToolHarness();
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

describe('write_file', () => {
  it('writes a file and says how many bytes', async () => {
    const res = await h.call('write_file', { file_path: 'outputs/hello.txt', content: 'hello world!' });
    expect(res.content).toBe('Wrote 12 bytes to outputs/hello.txt');
    expect(await readFile(at('outputs/hello.txt'), 'utf8')).toBe('hello world!');
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const res = await h.call('write_file', { file_path: 'outputs/euro.txt', content: '€€' });
    expect(res.content).toBe('Wrote 6 bytes to outputs/euro.txt');
  });

  it('creates missing parent folders inside an allowed folder', async () => {
    const res = await h.call('write_file', { file_path: 'temp/a/b/c.txt', content: 'x' });
    expect(res.error).toBeUndefined();
    expect((await stat(at('temp/a/b'))).isDirectory()).toBe(true);
  });

  it('replaces by default and appends with append=true', async () => {
    await h.call('write_file', { file_path: 'uploads/log.txt', content: 'one' });
    await h.call('write_file', { file_path: 'uploads/log.txt', content: 'two' });
    const res = await h.call('write_file', { file_path: 'uploads/log.txt', content: '+three', append: true });
    expect(res.content).toBe('Appended 6 bytes to uploads/log.txt');
    expect(await readFile(at('uploads/log.txt'), 'utf8')).toBe('two+three');
  });

  it('refuses writing to skills/', async () => {
    const res = await h.call('write_file', { file_path: 'skills/pdf/SKILL.md', content: 'x' });
    expect(res.content).toBe('Error: Permission denied: Cannot write to skills/. Only outputs/, temp/, uploads/ are writable.');
    expect(res.error?.code).toBe('PERMISSION_DENIED');
    expect(await readdir(at('skills'))).toEqual([]);
  });

  it('refuses writing at the workspace root', async () => {
    const res = await h.call('write_file', { file_path: 'notes.txt', content: 'x' });
    expect(res.content).toBe('Error: Permission denied: Cannot write to the workspace root. Only outputs/, temp/, uploads/ are writable.');
  });

  it('refuses overwriting the workspace metadata', async () => {
    const before = await readFile(at('.metadata.json'), 'utf8');
    const res = await h.call('write_file', { file_path: '.metadata.json', content: '{}' });
    expect(res.error?.code).toBe('PERMISSION_DENIED');
    expect(await readFile(at('.metadata.json'), 'utf8')).toBe(before);
  });

  it('refuses outputs/../../x', async () => {
    const res = await h.call('write_file', { file_path: 'outputs/../../x', content: 'x' });
    expect(res.content).toBe('Error: Path outside workspace: outputs/../../x');
  });

  it('refuses writing through a symlink in uploads/ to a folder outside', async () => {
    const outside: TempDir = await createTempDir('agentloop-outside-');
    try {
      await symlink(outside.path, at('uploads/out'));
      const res = await h.call('write_file', { file_path: 'uploads/out/pwned.txt', content: 'x' });
      expect(res.content).toBe('Error: Path outside workspace: uploads/out/pwned.txt');
      expect(await readdir(outside.path)).toEqual([]);
    } finally {
      await outside[Symbol.asyncDispose]();
    }
  });

  it('refuses writing through a symlink in uploads/ to /etc', async () => {
    await symlink('/etc', at('uploads/etc'));
    const res = await h.call('write_file', { file_path: 'uploads/etc/agentloop-test.conf', content: 'x' });
    expect(res.content).toBe('Error: Path outside workspace: uploads/etc/agentloop-test.conf');
  });

  it('refuses content above WRITE_MAX_BYTES', async () => {
    await h[Symbol.asyncDispose]();
    h = await createToolHarness({ env: { WRITE_MAX_BYTES: '4' } });
    const res = await h.call('write_file', { file_path: 'outputs/a.txt', content: '12345' });
    expect(res.content).toBe('Error: Content too large: 5 bytes (write_file accepts at most 4 bytes per call)');
    await expect(stat(at('outputs/a.txt'))).rejects.toThrow();
  });

  it('reports writing onto a folder', async () => {
    await mkdir(at('outputs/dir'));
    const res = await h.call('write_file', { file_path: 'outputs/dir', content: 'x' });
    expect(res.content).toBe('Error: outputs/dir is a directory');
  });

  it('reports a parent that is a file', async () => {
    await h.call('write_file', { file_path: 'outputs/file', content: 'x' });
    const res = await h.call('write_file', { file_path: 'outputs/file/child.txt', content: 'x' });
    expect(res.content).toMatch(/^Error: /);
    expect(res.content).not.toContain(h.workspace.root);
  });

  it('creates a folder only when it is missing, also when it was deleted between two writes', async () => {
    await h.call('write_file', { file_path: 'outputs/sub/a.txt', content: 'one' });
    const mkdirs = vi.spyOn(fsPromises, 'mkdir');
    try {
      expect((await h.call('write_file', { file_path: 'outputs/sub/a.txt', content: 'two' })).error).toBeUndefined();
      expect(mkdirs).not.toHaveBeenCalled();
      await rm(at('outputs/sub'), { recursive: true });
      expect((await h.call('write_file', { file_path: 'outputs/sub/a.txt', content: 'three' })).error).toBeUndefined();
      expect(mkdirs).toHaveBeenCalledTimes(1);
    } finally {
      mkdirs.mockRestore();
    }
    expect(await readFile(at('outputs/sub/a.txt'), 'utf8')).toBe('three');
  });

  it('refuses a folder replaced by a symlink after the path was checked', async () => {
    await mkdir(at('outputs/sub'), { recursive: true });
    const outside = await createTempDir();
    try {
      // The check sees a plain folder; by the time of the write, it is a link to elsewhere.
      const realpath = fsPromises.realpath.bind(fsPromises);
      let looks = 0;
      // The path's resolution looks at the folder first, write_file's own check next.
      const swap = vi.spyOn(fsPromises, 'realpath').mockImplementation(async (p, o) => {
        if (String(p) === at('outputs/sub') && ++looks === 2) {
          swap.mockRestore();
          await rm(at('outputs/sub'), { recursive: true });
          await symlink(outside.path, at('outputs/sub'));
        }
        return realpath(p, o);
      });
      const res = await h.call('write_file', { file_path: 'outputs/sub/a.txt', content: 'x' });
      swap.mockRestore();
      expect(res.error?.code).toBe('PERMISSION_DENIED');
      expect(await readdir(outside.path)).toEqual([]);
    } finally {
      await outside[Symbol.asyncDispose]();
    }
  });
});
