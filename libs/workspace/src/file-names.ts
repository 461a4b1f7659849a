import path from 'node:path';

/** Longest file name kept, in UTF-8 bytes (most filesystems allow 255). */
export const MAX_FILE_NAME_BYTES = 200;

/**
 * Turns a client-supplied file name into a safe single path segment:
 * the last segment only (both "/" and "\" separate), Unicode NFC, control
 * characters removed, characters Windows forbids replaced by "_", no leading
 * dots (no hidden files, no ".."), no trailing dots or spaces, at most
 * MAX_FILE_NAME_BYTES bytes with the extension kept. Returns `fallback` when
 * nothing usable is left.
 */
export function sanitizeFileName(raw: string, fallback = 'upload'): string {
  const last = raw.split(/[\\/]/).pop() ?? '';
  let name = last
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '')
    .replace(/[<>:"|?*]/g, '_')
    .trim()
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  if (name === '') return fallback;
  if (Buffer.byteLength(name, 'utf8') > MAX_FILE_NAME_BYTES) {
    const ext = path.extname(name);
    const keepExt = Buffer.byteLength(ext, 'utf8') <= 16 ? ext : '';
    name = truncateUtf8(keepExt === '' ? name : name.slice(0, -keepExt.length), MAX_FILE_NAME_BYTES - Buffer.byteLength(keepExt, 'utf8')) + keepExt;
  }
  return name;
}

/** The longest prefix of `s` (whole code points) that fits in `maxBytes` UTF-8 bytes. */
function truncateUtf8(s: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}
