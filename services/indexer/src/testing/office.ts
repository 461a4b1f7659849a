import { zipSync } from 'fflate';

/**
 * Minimal Office files for tests and benchmarks, built from hand-written XML
 * (no binaries in the repository). Only the parts readers need are written.
 */

const enc = (s: string) => new TextEncoder().encode(s);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const R_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

function contentTypes(overrides: Record<string, string>): string {
  const o = Object.entries(overrides)
    .map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`)
    .join('');
  return (
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    `<Default Extension="xml" ContentType="application/xml"/>${o}</Types>`
  );
}

function rels(targets: { id: string; type: string; target: string }[]): string {
  return `${XML}<Relationships xmlns="${REL_NS}">${targets.map((t) => `<Relationship Id="${t.id}" Type="${R_NS}/${t.type}" Target="${t.target}"/>`).join('')}</Relationships>`;
}

export type DocxBlock = string | { heading: string; level?: number } | { table: string[][] } | { pageBreak: true };

/** A .docx of paragraphs, headings, tables (first row as header) and page breaks. */
export function buildDocx(blocks: readonly DocxBlock[], opts: { declaredPages?: number } = {}): Uint8Array {
  const run = (t: string) => `<w:r><w:t xml:space="preserve">${esc(t)}</w:t></w:r>`;
  const body = blocks
    .map((b) => {
      if (typeof b === 'string') return `<w:p>${run(b)}</w:p>`;
      if ('pageBreak' in b) return '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';
      if ('heading' in b) return `<w:p><w:pPr><w:pStyle w:val="Heading${b.level ?? 1}"/></w:pPr>${run(b.heading)}</w:p>`;
      const rows = b.table.map((row, i) => {
        const header = i === 0 ? '<w:trPr><w:tblHeader/></w:trPr>' : '';
        return `<w:tr>${header}${row.map((c) => `<w:tc><w:p>${run(c)}</w:p></w:tc>`).join('')}</w:tr>`;
      });
      return `<w:tbl>${rows.join('')}</w:tbl>`;
    })
    .join('');
  const styles =
    `${XML}<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
    [1, 2, 3].map((n) => `<w:style w:type="paragraph" w:styleId="Heading${n}"><w:name w:val="heading ${n}"/></w:style>`).join('') +
    '</w:styles>';
  const files: Record<string, Uint8Array> = {
    '[Content_Types].xml': enc(
      contentTypes({
        '/word/document.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
        '/word/styles.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml',
      }),
    ),
    '_rels/.rels': enc(rels([{ id: 'rId1', type: 'officeDocument', target: 'word/document.xml' }])),
    'word/_rels/document.xml.rels': enc(rels([{ id: 'rId1', type: 'styles', target: 'styles.xml' }])),
    'word/document.xml': enc(`${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`),
    'word/styles.xml': enc(styles),
  };
  if (opts.declaredPages !== undefined) {
    files['docProps/app.xml'] = enc(
      `${XML}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Pages>${opts.declaredPages}</Pages></Properties>`,
    );
  }
  return zipSync(files);
}

export interface SheetSpec {
  name: string;
  rows: readonly (readonly (string | number | boolean)[])[];
}

/** A .xlsx; strings go to the shared-strings part, numbers and booleans inline. */
export function buildXlsx(sheets: readonly SheetSpec[]): Uint8Array {
  const shared: string[] = [];
  const sharedIndex = new Map<string, number>();
  const col = (i: number) => {
    let s = '';
    for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
    return s;
  };
  const sheetXml = (sheet: SheetSpec) => {
    const rows = sheet.rows.map((row, r) => {
      const cells = row.map((v, c) => {
        const ref = `${col(c)}${r + 1}`;
        if (typeof v === 'number') return `<c r="${ref}"><v>${v}</v></c>`;
        if (typeof v === 'boolean') return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`;
        let idx = sharedIndex.get(v);
        if (idx === undefined) {
          idx = shared.length;
          shared.push(v);
          sharedIndex.set(v, idx);
        }
        return `<c r="${ref}" t="s"><v>${idx}</v></c>`;
      });
      return `<row r="${r + 1}">${cells.join('')}</row>`;
    });
    return `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows.join('')}</sheetData></worksheet>`;
  };
  const files: Record<string, Uint8Array> = {};
  sheets.forEach((s, i) => {
    files[`xl/worksheets/sheet${i + 1}.xml`] = enc(sheetXml(s));
  });
  files['xl/sharedStrings.xml'] = enc(
    `${XML}<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${shared.length}" uniqueCount="${shared.length}">` +
      `${shared.map((s) => `<si><t xml:space="preserve">${esc(s)}</t></si>`).join('')}</sst>`,
  );
  return zipSync({ ...workbookParts(sheets.map((s) => s.name)), ...files });
}

/** A one-sheet .xlsx of `rows` × `cols` numeric cells, written without building the rows in memory twice. */
export function buildLargeXlsx(rows: number, cols: number): Uint8Array {
  const parts: string[] = [`${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`];
  for (let r = 1; r <= rows; r++) {
    let row = `<row r="${r}">`;
    for (let c = 0; c < cols; c++) row += `<c><v>${r * cols + c}</v></c>`;
    parts.push(`${row}</row>`);
  }
  parts.push('</sheetData></worksheet>');
  const sheet = enc(parts.join(''));
  return zipSync({ ...workbookParts(['Big']), 'xl/worksheets/sheet1.xml': sheet });
}

function workbookParts(names: readonly string[]): Record<string, Uint8Array> {
  const sheetRels = names.map((_, i) => ({ id: `rId${i + 1}`, type: 'worksheet', target: `worksheets/sheet${i + 1}.xml` }));
  return {
    '[Content_Types].xml': enc(contentTypes({ '/xl/workbook.xml': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml' })),
    '_rels/.rels': enc(rels([{ id: 'rId1', type: 'officeDocument', target: 'xl/workbook.xml' }])),
    'xl/_rels/workbook.xml.rels': enc(rels([...sheetRels, { id: `rId${names.length + 1}`, type: 'sharedStrings', target: 'sharedStrings.xml' }])),
    'xl/workbook.xml': enc(
      `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${R_NS}"><sheets>` +
        names.map((n, i) => `<sheet name="${esc(n)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('') +
        '</sheets></workbook>',
    ),
  };
}

/** A .pptx whose slide i holds the paragraphs of `slides[i]` (the first is its title). */
export function buildPptx(slides: readonly (readonly string[])[]): Uint8Array {
  const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
  const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
  const files: Record<string, Uint8Array> = {
    '[Content_Types].xml': enc(contentTypes({ '/ppt/presentation.xml': 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml' })),
    '_rels/.rels': enc(rels([{ id: 'rId1', type: 'officeDocument', target: 'ppt/presentation.xml' }])),
    'ppt/_rels/presentation.xml.rels': enc(rels(slides.map((_, i) => ({ id: `rId${i + 1}`, type: 'slide', target: `slides/slide${i + 1}.xml` })))),
    'ppt/presentation.xml': enc(
      `${XML}<p:presentation xmlns:p="${P}" xmlns:r="${R_NS}"><p:sldIdLst>` +
        slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 1}"/>`).join('') +
        '</p:sldIdLst></p:presentation>',
    ),
  };
  slides.forEach((paras, i) => {
    const body = paras.map((t) => `<a:p><a:r><a:t>${esc(t)}</a:t></a:r></a:p>`).join('');
    files[`ppt/slides/slide${i + 1}.xml`] = enc(
      `${XML}<p:sld xmlns:a="${A}" xmlns:p="${P}"><p:cSld><p:spTree><p:sp><p:txBody>${body}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`,
    );
  });
  return zipSync(files);
}

/**
 * A zip whose central directory declares `declared` uncompressed bytes for a
 * part that really inflates to `actual` zero bytes: declared > actual is a
 * bomb caught before inflating; declared < actual a bomb caught while inflating.
 */
export function buildZipBomb(opts: { part?: string; actual: number; declared?: number }): Uint8Array {
  const part = opts.part ?? 'word/document.xml';
  const zip = zipSync({
    '[Content_Types].xml': enc(contentTypes({})),
    [part]: [new Uint8Array(opts.actual), { level: 9 }],
  });
  return opts.declared === undefined ? zip : patchDeclaredSize(zip, part, opts.declared);
}

/** Rewrites the uncompressed size a zip declares for `part` (local header and central directory). */
export function patchDeclaredSize(zip: Uint8Array, part: string, size: number): Uint8Array {
  const out = zip.slice();
  const view = new DataView(out.buffer);
  const name = enc(part);
  const matches = (at: number) => name.every((b, i) => out[at + i] === b);
  for (let i = 0; i + 46 < out.length; i++) {
    const sig = view.getUint32(i, true);
    if (sig === 0x04034b50 && view.getUint16(i + 26, true) === name.length && matches(i + 30)) view.setUint32(i + 22, size, true);
    if (sig === 0x02014b50 && view.getUint16(i + 28, true) === name.length && matches(i + 46)) view.setUint32(i + 24, size, true);
  }
  return out;
}
