/**
 * A minimal PDF writer for tests and benchmarks: one Helvetica text page per
 * entry, WinAnsi (Latin-1) text only — CJK needs an embedded font, which these
 * fixtures avoid (Chinese tests use text and DOCX files).
 */
export interface PdfOptions {
  /** Adds a standard-security /Encrypt dictionary whose user password is not empty. */
  encrypted?: boolean;
}

/** Builds a PDF whose page i shows the lines of `pages[i]` (split on "\n"). */
export function buildPdf(pages: readonly string[], opts: PdfOptions = {}): Uint8Array {
  const chunks: string[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (s: string) => {
    chunks.push(s);
    length += Buffer.byteLength(s, 'latin1');
  };
  const object = (id: number, body: string) => {
    offsets[id] = length;
    push(`${id} 0 obj\n${body}\nendobj\n`);
  };

  const n = pages.length;
  // Ids: 1 catalog, 2 pages, 3 font, then (page, content) pairs, then the optional /Encrypt.
  const pageId = (i: number) => 4 + 2 * i;
  const encryptId = 4 + 2 * n;
  push('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Kids [${pages.map((_, i) => `${pageId(i)} 0 R`).join(' ')}] /Count ${n} >>`);
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  pages.forEach((text, i) => {
    const lines = text
      .split('\n')
      .map((l) => `(${escapePdfString(l)}) Tj T*`)
      .join('\n');
    const stream = `BT /F1 11 Tf 14 TL 56 760 Td\n${lines}\nET`;
    object(pageId(i), `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId(i) + 1} 0 R >>`);
    object(pageId(i) + 1, `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
  });
  const size = opts.encrypted ? encryptId + 1 : encryptId;
  if (opts.encrypted) {
    const hex32 = (b: number) => Buffer.alloc(32, b).toString('hex');
    object(encryptId, `<< /Filter /Standard /V 1 /R 2 /O <${hex32(0x41)}> /U <${hex32(0x42)}> /P -4 >>`);
  }
  const xref = length;
  push(`xref\n0 ${size}\n0000000000 65535 f \n`);
  for (let id = 1; id < size; id++) push(`${String(offsets[id] ?? 0).padStart(10, '0')} 00000 n \n`);
  const id = '0123456789abcdef0123456789abcdef';
  const extra = opts.encrypted ? ` /Encrypt ${encryptId} 0 R /ID [<${id}> <${id}>]` : '';
  push(`trailer\n<< /Size ${size} /Root 1 0 R${extra} >>\nstartxref\n${xref}\n%%EOF\n`);
  const bytes = Buffer.from(chunks.join(''), 'latin1');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

function escapePdfString(s: string): string {
  return s.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\xff]/g, '?');
}
