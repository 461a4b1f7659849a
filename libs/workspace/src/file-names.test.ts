import { describe, expect, it } from 'vitest';
import { MAX_FILE_NAME_BYTES, sanitizeFileName } from './file-names.js';

describe('sanitizeFileName', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\win.ini', 'win.ini'],
    ['/abs/path/data.xlsx', 'data.xlsx'],
    ['.bashrc', 'bashrc'],
    ['..', 'upload'],
    ['', 'upload'],
    ['a\u0000b.txt', 'ab.txt'],
    ['evil\u202egnp.exe', 'evilgnp.exe'],
    ['what?<x>.md', 'what__x_.md'],
    ['name. . .', 'name'],
    ['季度报告.docx', '季度报告.docx'],
  ])('%j becomes %j', (raw, expected) => {
    expect(sanitizeFileName(raw)).toBe(expected);
  });

  it('keeps the extension when it shortens a long name, without splitting a character', () => {
    const long = `${'长'.repeat(200)}.pdf`;
    const out = sanitizeFileName(long);
    expect(Buffer.byteLength(out, 'utf8')).toBeLessThanOrEqual(MAX_FILE_NAME_BYTES);
    expect(out.endsWith('.pdf')).toBe(true);
    expect(out.replace('.pdf', '')).toMatch(/^长+$/);
  });

  it('decomposed Unicode is stored composed (NFC) so one name is one file', () => {
    expect(sanitizeFileName('cafe\u0301.txt')).toBe('caf\u00e9.txt');
  });
});
