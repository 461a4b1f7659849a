/**
 * Skill packages shaped like Anthropic's published skills (anthropics/skills: pdf, docx), written
 * by the tests: spec frontmatter with allowed-tools and metadata.version, scripts that read
 * sys.argv and print their usage on stdout, a helper imported from the script's own folder, a
 * `scripts` package run with `python -m`, a script in a sub-folder, requirements.txt, and SKILL.md
 * naming its reference files in another case (REFERENCE.md for reference.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const PDF_FORMS: Record<string, string> = {
  'SKILL.md': [
    '---',
    'name: pdf-forms',
    'description: Fill fillable PDF forms. Use when the user uploads a PDF form and wants it filled in.',
    'license: Apache-2.0',
    'compatibility: Requires python3 and network access to a Python package index (pypdf)',
    'allowed-tools: read_file write_file run_skill_script',
    'metadata:',
    '  author: agentloop-tests',
    '  version: "1.2"',
    '---',
    '',
    '# PDF form filling',
    '',
    'For the library details see REFERENCE.md. To fill a form, read FORMS.md and follow it:',
    '',
    '1. `python scripts/check_fillable_fields.py <file.pdf>`',
    '2. `python -m scripts.fields <file.pdf> <field_info.json>`',
    '3. `python scripts/fill_fillable_fields.py <input.pdf> <field_values.json> <output.pdf>`',
    '',
  ].join('\n'),
  'reference.md': '# pypdf reference\n\nPdfReader(path).get_fields() returns the form fields.\n',
  'forms.md': '# Forms\n\nfield_values.json is a list of {"field_id", "page", "value"}.\n',
  'LICENSE.txt': 'Apache License 2.0 (test fixture)\n',
  'requirements.txt': 'pypdf\n',
  'scripts/__init__.py': '',
  'scripts/field_info.py': [
    'from pypdf import PdfReader',
    '',
    '',
    'def get_field_info(reader: PdfReader):',
    '    fields = []',
    '    for page_number, page in enumerate(reader.pages, start=1):',
    '        for annot in page.get("/Annots", None) or []:',
    '            a = annot.get_object()',
    '            if a.get("/Subtype") != "/Widget" or "/T" not in a:',
    '                continue',
    '            fields.append({"field_id": str(a["/T"]), "page": page_number, "type": "text" if a.get("/FT") == "/Tx" else "other", "value": str(a.get("/V", ""))})',
    '    return fields',
    '',
  ].join('\n'),
  'scripts/check_fillable_fields.py': [
    'import sys',
    'from pypdf import PdfReader',
    '',
    'if len(sys.argv) != 2:',
    '    print("Usage: check_fillable_fields.py [input pdf]")',
    '    sys.exit(1)',
    'reader = PdfReader(sys.argv[1])',
    'if reader.get_fields():',
    '    print("This PDF has fillable form fields")',
    'else:',
    '    print("This PDF does not have fillable form fields")',
    '',
  ].join('\n'),
  'scripts/fields.py': [
    '"""python -m scripts.fields <pdf> [field_info.json]: the form fields of a PDF, with their values."""',
    'import json',
    'import sys',
    '',
    'from pypdf import PdfReader',
    '',
    'from scripts.field_info import get_field_info',
    '',
    'info = get_field_info(PdfReader(sys.argv[1]))',
    'if len(sys.argv) > 2:',
    '    with open(sys.argv[2], "w") as f:',
    '        json.dump(info, f)',
    '    print(f"Wrote {len(info)} fields to {sys.argv[2]}")',
    'else:',
    '    print(json.dumps({f["field_id"]: f["value"] for f in info}))',
    '',
  ].join('\n'),
  'scripts/fill_fillable_fields.py': [
    'import json',
    'import sys',
    '',
    'from pypdf import PdfReader, PdfWriter',
    '',
    "# Imported from this script's own folder, as Anthropic's pdf skill does.",
    'from field_info import get_field_info',
    '',
    '',
    'def main():',
    '    if len(sys.argv) != 4:',
    '        print("Usage: fill_fillable_fields.py [input pdf] [field_values.json] [output pdf]")',
    '        sys.exit(1)',
    '    input_pdf, values_json, output_pdf = sys.argv[1:]',
    '    with open(values_json) as f:',
    '        values = json.load(f)',
    '    reader = PdfReader(input_pdf)',
    '    known = {f["field_id"]: f for f in get_field_info(reader)}',
    '    by_page = {}',
    '    for v in values:',
    '        if v["field_id"] not in known:',
    '            print(f"ERROR: `{v[\'field_id\']}` is not a valid field ID")',
    '            sys.exit(1)',
    '        by_page.setdefault(v["page"], {})[v["field_id"]] = v["value"]',
    '    writer = PdfWriter(clone_from=reader)',
    '    for page, page_values in by_page.items():',
    '        writer.update_page_form_field_values(writer.pages[page - 1], page_values, auto_regenerate=False)',
    '    writer.set_need_appearances_writer(True)',
    '    with open(output_pdf, "wb") as f:',
    '        writer.write(f)',
    '    print(f"Filled {sum(len(v) for v in by_page.values())} fields into {output_pdf}")',
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ].join('\n'),
};

const OFFICE: Record<string, string> = {
  'SKILL.md': [
    '---',
    'name: office-tools',
    'description: Unpack Office documents (DOCX, XLSX, PPTX are ZIP packages) to edit their XML.',
    'metadata:',
    '  version: "0.3"',
    '---',
    '',
    '# Office tools',
    '',
    'Unpack: `python scripts/office/unpack.py <file.docx> <output_dir>`',
    '',
  ].join('\n'),
  'scripts/office/helpers.py': 'def member_names(archive):\n    return sorted(i.filename for i in archive.infolist() if not i.is_dir())\n',
  'scripts/office/unpack.py': [
    'import sys',
    'import zipfile',
    '',
    'from helpers import member_names',
    '',
    'if len(sys.argv) != 3:',
    '    print("Usage: unpack.py <office_file> <output_dir>")',
    '    sys.exit(1)',
    'with zipfile.ZipFile(sys.argv[1]) as archive:',
    '    archive.extractall(sys.argv[2])',
    '    print("\\n".join(member_names(archive)))',
    '',
  ].join('\n'),
};

/** Writes the fixture skills into `root` (one folder per skill). */
export function writeFixtureSkills(root: string): void {
  for (const [id, files] of Object.entries({ 'pdf-forms': PDF_FORMS, 'office-tools': OFFICE })) {
    for (const [rel, text] of Object.entries(files)) {
      const file = path.join(root, id, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
  }
}

/**
 * A one-page PDF with a fillable AcroForm text field per name, written by hand (objects, xref
 * table with byte offsets, trailer), so the test needs no PDF library to make its input.
 */
export function fillablePdf(fieldNames: readonly string[]): Buffer {
  const fieldIds = fieldNames.map((_, i) => 5 + i);
  const refs = fieldIds.map((id) => `${id} 0 R`).join(' ');
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [${refs}] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 4 0 R >> >> >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [${refs}] >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...fieldNames.map(
      (name, i) =>
        `<< /Type /Annot /Subtype /Widget /FT /Tx /T (${name}) /Rect [72 ${700 - i * 40} 300 ${720 - i * 40}] /P 3 0 R /F 4 /DA (/Helv 12 Tf 0 g) >>`,
    ),
  ];
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((obj, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${obj}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** The `/V` value of each field `/T` in a PDF written without object streams (as pypdf writes by default). */
export function pdfFieldValues(pdf: Buffer): Record<string, string> {
  const text = pdf.toString('latin1');
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/(\d+) 0 obj([\s\S]*?)endobj/g)) {
    const body = m[2] ?? '';
    const name = /\/T \(([^)]*)\)/.exec(body)?.[1];
    const value = /\/V \(([^)]*)\)/.exec(body)?.[1];
    if (name !== undefined && value !== undefined) out[pdfString(name)] = pdfString(value);
  }
  return out;
}

/** A PDF literal string's escapes (`\\137` octal, `\\(`, `\\\\`) decoded. */
function pdfString(raw: string): string {
  return raw.replace(/\\([0-7]{1,3}|.)/g, (_, e: string) => (/^[0-7]+$/.test(e) ? String.fromCharCode(parseInt(e, 8)) : e));
}
