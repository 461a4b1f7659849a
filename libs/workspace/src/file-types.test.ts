import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectFileType, fileTypeOfName } from './file-types.js';
import { listWorkspaceFiles } from './listing.js';
import { createTempDir, type TempDir } from './temp-dir.js';

let tmp: TempDir;
beforeEach(async () => {
  tmp = await createTempDir('agentloop-ws-');
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const PDF = Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n');

async function file(name: string, data: Buffer | string): Promise<string> {
  const p = path.join(tmp.path, name);
  await writeFile(p, data);
  return p;
}

describe('fileTypeOfName', () => {
  it.each([
    ['a.PDF', 'pdf'],
    ['b.docx', 'document'],
    ['c.xlsx', 'spreadsheet'],
    ['d.pptx', 'presentation'],
    ['e.csv', 'csv'],
    ['f.py', 'python'],
    ['g.jpeg', 'image'],
    ['h.tar', 'archive'],
    ['noext', 'unknown'],
  ])('%s is %s (seed 001 §3.1)', (name, type) => {
    expect(fileTypeOfName(name)).toBe(type);
  });
});

describe('detectFileType', () => {
  it('a PDF named .pdf is a pdf without a mismatch', async () => {
    expect(await detectFileType(await file('r.pdf', PDF))).toEqual({ type: 'pdf', mime: 'application/pdf', detected: 'pdf' });
  });

  it('a PNG named .pdf is an image and the mismatch is reported', async () => {
    const t = await detectFileType(await file('r.pdf', PNG));
    expect(t.type).toBe('image');
    expect(t.mime).toBe('image/png');
    expect(t.mismatch).toBe('named ".pdf" but the content is PNG (image/png)');
  });

  it('plain text named .pdf is text and the mismatch says so', async () => {
    const t = await detectFileType(await file('fake.pdf', 'just some words\n'));
    expect(t).toMatchObject({ type: 'text', mime: 'text/plain; charset=utf-8' });
    expect(t.mismatch).toBe('named ".pdf" but the content is not PDF (it is plain text)');
  });

  it('a PDF named .txt is a pdf (content wins) and the mismatch is reported', async () => {
    const t = await detectFileType(await file('notes.txt', PDF));
    expect(t.type).toBe('pdf');
    expect(t.mismatch).toContain('named ".txt" but the content is PDF');
  });

  it('text formats without a signature are judged by their name', async () => {
    expect(await detectFileType(await file('data.csv', 'a,b\n1,2\n'))).toEqual({ type: 'csv', mime: 'text/csv; charset=utf-8' });
    expect(await detectFileType(await file('x.bin', 'hello'))).toEqual({ type: 'unknown', mime: 'application/octet-stream' });
  });

  it('an empty file named .docx is reported, not thrown', async () => {
    const t = await detectFileType(await file('empty.docx', ''));
    expect(t.mismatch).toContain('named ".docx" but the content is not DOCX');
  });
});

describe('listWorkspaceFiles', () => {
  it('lists regular files of the named folders, skipping dot-files and symlinks, sorted', async () => {
    const ws = path.join(tmp.path, 'ws');
    await mkdir(path.join(ws, 'uploads', 'sub'), { recursive: true });
    await mkdir(path.join(ws, 'outputs'), { recursive: true });
    await mkdir(path.join(ws, 'temp'), { recursive: true });
    await writeFile(path.join(ws, 'uploads', 'b.pdf'), PDF);
    await writeFile(path.join(ws, 'uploads', 'sub', 'a.txt'), 'x');
    await writeFile(path.join(ws, 'uploads', '.upload-123.part'), 'partial');
    await writeFile(path.join(ws, 'temp', 'scratch.txt'), 'x');
    await writeFile(path.join(ws, 'outputs', 'report.md'), '# r');
    await symlink('/etc/passwd', path.join(ws, 'outputs', 'passwd'));
    await symlink('/etc', path.join(ws, 'outputs', 'etc'));
    const { files, truncated } = await listWorkspaceFiles(ws, ['uploads', 'outputs']);
    expect(truncated).toBe(false);
    expect(files.map((f) => f.path)).toEqual(['uploads/b.pdf', 'uploads/sub/a.txt', 'outputs/report.md']);
    expect(files[0]).toMatchObject({ name: 'b.pdf', size: PDF.length, type: 'pdf' });
  });

  it('a top-level folder replaced by a symlink is not followed', async () => {
    const ws = path.join(tmp.path, 'ws');
    await mkdir(ws, { recursive: true });
    await symlink('/etc', path.join(ws, 'outputs'));
    expect((await listWorkspaceFiles(ws, ['outputs'])).files).toEqual([]);
  });

  it('sinceMs keeps only files modified since then; maxFiles truncates', async () => {
    const ws = path.join(tmp.path, 'ws');
    await mkdir(path.join(ws, 'outputs'), { recursive: true });
    for (const n of ['old.md', 'new1.md', 'new2.md']) await writeFile(path.join(ws, 'outputs', n), n);
    const past = new Date(Date.now() - 3_600_000);
    await utimes(path.join(ws, 'outputs', 'old.md'), past, past);
    const since = Date.now() - 60_000;
    expect((await listWorkspaceFiles(ws, ['outputs'], { sinceMs: since })).files.map((f) => f.name)).toEqual(['new1.md', 'new2.md']);
    expect(await listWorkspaceFiles(ws, ['outputs'], { maxFiles: 1 })).toMatchObject({ truncated: true, files: [{ name: 'new1.md' }] });
  });

  it('refuses a folder name that is not a top-level name', async () => {
    await expect(listWorkspaceFiles(tmp.path, ['../etc'])).rejects.toThrow('not a top-level folder name');
  });
});
