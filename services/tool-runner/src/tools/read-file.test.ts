import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempDir, createToolHarness, type TempDir, type ToolHarness } from '../testing/index.js';
import type { DocumentReader } from './read-file.js';

let h: ToolHarness;
const put = (rel: string, data: string | Uint8Array) => writeFile(path.join(h.workspace.root, rel), data);

beforeEach(async () => {
  h = await createToolHarness();
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

describe('read_file', () => {
  it('returns a small text file in full', async () => {
    await put('uploads/notes.txt', 'line 1\nline 2\n');
    const res = await h.call('read_file', { file_path: 'uploads/notes.txt' });
    expect(res.error).toBeUndefined();
    expect(res.content).toBe('line 1\nline 2\n');
  });

  it('returns a file one byte under 100 KB in full', async () => {
    const text = 'a'.repeat(102_399);
    await put('uploads/big.txt', text);
    const res = await h.call('read_file', { file_path: 'uploads/big.txt' });
    expect(res.content).toBe(text);
  });

  it('returns a 50 KB preview with a search_file hint for a file of exactly 100 KB', async () => {
    const text = 'b'.repeat(51_200) + 'c'.repeat(51_200);
    await put('uploads/big.txt', text);
    const res = await h.call('read_file', { file_path: 'uploads/big.txt' });
    expect(res.error).toBeUndefined();
    const [preview, hint] = res.content.split('\n\n[Preview: ');
    expect(preview).toBe('b'.repeat(51_200));
    expect(hint).toContain('the first 51200 of 102400 bytes of uploads/big.txt');
    expect(hint).toContain('search_file');
  });

  it('returns a preview for a file above 100 KB', async () => {
    await put('uploads/huge.txt', 'z'.repeat(300_000));
    const res = await h.call('read_file', { file_path: 'uploads/huge.txt' });
    expect(res.content.startsWith('z'.repeat(51_200) + '\n\n[Preview:')).toBe(true);
  });

  it('does not cut a multi-byte character at the end of a preview', async () => {
    // 51199 ASCII bytes, then 3-byte characters: the preview window ends inside the first one.
    await put('uploads/utf8.txt', 'a'.repeat(51_199) + '€'.repeat(20_000));
    const res = await h.call('read_file', { file_path: 'uploads/utf8.txt' });
    const preview = res.content.split('\n\n[Preview: ')[0] ?? '';
    expect(preview).toBe('a'.repeat(51_199));
    expect(preview).not.toContain('\uFFFD');
  });

  it('honours TEXT_FILE_MAX_BYTES and TEXT_PREVIEW_BYTES', async () => {
    await h[Symbol.asyncDispose]();
    h = await createToolHarness({ env: { TEXT_FILE_MAX_BYTES: '10', TEXT_PREVIEW_BYTES: '4' } });
    await put('uploads/t.txt', '0123456789');
    const res = await h.call('read_file', { file_path: 'uploads/t.txt' });
    expect(res.content.startsWith('0123\n\n[Preview: the first 4 of 10 bytes')).toBe(true);
  });

  it('accepts UTF-8 text whose 8 KB sniff window ends inside a character', async () => {
    const text = 'a'.repeat(8_191) + 'é'.repeat(10);
    await put('uploads/accents.txt', text);
    const res = await h.call('read_file', { file_path: 'uploads/accents.txt' });
    expect(res.content).toBe(text);
  });

  it('refuses a file with NUL bytes as binary', async () => {
    await put('uploads/blob.bin', Buffer.from([0x41, 0x00, 0x42]));
    const res = await h.call('read_file', { file_path: 'uploads/blob.bin' });
    expect(res.content).toBe('Error: uploads/blob.bin is a binary file (bin data); read_file reads text');
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
  });

  it('names a PDF as such', async () => {
    await put('uploads/report.pdf', Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0x00])]));
    const res = await h.call('read_file', { file_path: 'uploads/report.pdf' });
    expect(res.content).toBe('Error: uploads/report.pdf is a binary file (PDF document); read_file reads text');
  });

  it('names an Office document by its extension', async () => {
    await put('uploads/plan.docx', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00]));
    const res = await h.call('read_file', { file_path: 'uploads/plan.docx' });
    expect(res.content).toBe('Error: uploads/plan.docx is a binary file (Word document); read_file reads text');
  });

  it('refuses invalid UTF-8 as binary', async () => {
    await put('uploads/latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6f, 0x6b]));
    const res = await h.call('read_file', { file_path: 'uploads/latin1.txt' });
    expect(res.content).toBe('Error: uploads/latin1.txt is a binary file (txt data); read_file reads text');
  });

  it('hands a document to a reader that accepts it', async () => {
    const reader: DocumentReader = {
      name: 'fake-pdf',
      accepts: ({ extension }) => extension === '.pdf',
      read: ({ relative, size }) => Promise.resolve(`extracted ${relative} (${size} bytes)`),
    };
    await h[Symbol.asyncDispose]();
    h = await createToolHarness({ documentReaders: [reader] });
    await put('uploads/report.pdf', Buffer.from('%PDF-1.7\n\0'));
    const res = await h.call('read_file', { file_path: 'uploads/report.pdf' });
    expect(res.content).toBe('extracted uploads/report.pdf (10 bytes)');
  });

  it('reports a missing file', async () => {
    const res = await h.call('read_file', { file_path: 'uploads/x.txt' });
    expect(res.content).toBe('Error: File not found: uploads/x.txt');
    expect(res.error).toEqual({ code: 'NOT_FOUND', message: 'File not found: uploads/x.txt', retryable: false });
  });

  it('reports a directory', async () => {
    const res = await h.call('read_file', { file_path: 'outputs' });
    expect(res.content).toBe('Error: outputs is a directory; use list_workspace_files to see its contents');
  });

  it('reads an empty file', async () => {
    await put('uploads/empty.txt', '');
    expect((await h.call('read_file', { file_path: 'uploads/empty.txt' })).content).toBe('(empty file)');
  });

  it('refuses ../../etc/passwd', async () => {
    const res = await h.call('read_file', { file_path: '../../etc/passwd' });
    expect(res.content).toBe('Error: Path outside workspace: ../../etc/passwd');
    expect(res.error?.code).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('refuses /etc/passwd', async () => {
    const res = await h.call('read_file', { file_path: '/etc/passwd' });
    expect(res.content).toBe('Error: Path outside workspace: /etc/passwd');
  });

  it('refuses reading through a symlink in uploads/ to /etc', async () => {
    await symlink('/etc', path.join(h.workspace.root, 'uploads', 'etc'));
    const res = await h.call('read_file', { file_path: 'uploads/etc/passwd' });
    expect(res.content).toBe('Error: Path outside workspace: uploads/etc/passwd');
  });

  it('reads a skill file through a skills/ symlink into SKILLS_ROOT', async () => {
    const skills: TempDir = await createTempDir('agentloop-skills-');
    try {
      await mkdir(path.join(skills.path, 'pdf'));
      await writeFile(path.join(skills.path, 'pdf', 'SKILL.md'), '# PDF skill');
      await h[Symbol.asyncDispose]();
      h = await createToolHarness({ env: { SKILLS_ROOT: skills.path } });
      await symlink(path.join(skills.path, 'pdf'), path.join(h.workspace.root, 'skills', 'pdf'));
      expect((await h.call('read_file', { file_path: 'skills/pdf/SKILL.md' })).content).toBe('# PDF skill');
    } finally {
      await skills[Symbol.asyncDispose]();
    }
  });
});
