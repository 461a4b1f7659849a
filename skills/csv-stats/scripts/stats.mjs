// Per-column statistics of a CSV file in the workspace (the csv-stats skill). Same contract as
// stats.py: JSON arguments on stdin {"file", "columns"?, "delimiter"?, "output"?}, JSON on stdout.
// Node built-ins only.
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function fail(message) {
  console.error(message);
  process.exit(2);
}

const workspace = realpathSync(process.env.AGENT_WORKSPACE_PATH);

function inside(rel, what, mustExist) {
  // A path outside the workspace is refused before anything is looked up on disk, so the answer
  // never tells whether some host file exists.
  const lexical = path.resolve(workspace, rel);
  if (lexical !== workspace && !lexical.startsWith(workspace + path.sep)) fail(`${what} ${JSON.stringify(rel)} is outside the workspace`);
  // Resolve the longest existing prefix (symlinks included), then append the rest.
  let probe = lexical;
  let rest = '';
  for (;;) {
    let real;
    try {
      real = realpathSync(probe);
    } catch {
      if (mustExist || probe === path.dirname(probe)) fail(`${what} ${JSON.stringify(rel)} not found in the workspace`);
      rest = rest ? path.join(path.basename(probe), rest) : path.basename(probe);
      probe = path.dirname(probe);
      continue;
    }
    const full = rest ? path.join(real, rest) : real;
    if (!full.startsWith(workspace + path.sep)) fail(`${what} ${JSON.stringify(rel)} is outside the workspace`);
    return full;
  }
}

/** RFC 4180 rows: quoted fields may hold the delimiter, quotes ("") and line breaks. */
function parseCsv(text, delimiter) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

let args;
try {
  args = JSON.parse(readFileSync(0, 'utf8') || '{}');
} catch (err) {
  fail(`the arguments are not JSON: ${err.message}`);
}
if (!args || typeof args !== 'object' || Array.isArray(args)) fail('the arguments must be a JSON object');
const rel = args.file;
if (typeof rel !== 'string' || rel === '') fail('"file" (a workspace-relative CSV path, e.g. uploads/data.csv) is required');
const file = inside(rel, 'file', true);
if (!statSync(file).isFile()) fail(`file ${JSON.stringify(rel)} not found in the workspace`);
const wanted = args.columns ?? null;
if (wanted !== null && !(Array.isArray(wanted) && wanted.every((c) => typeof c === 'string'))) fail('"columns" must be a list of column names');
const delimiter = args.delimiter || ',';

const [headerRow, ...body] = parseCsv(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''), delimiter);
if (!headerRow) fail(`file ${JSON.stringify(rel)} is empty`);
const header = headerRow.map((h) => h.trim());
if (wanted?.length) {
  const missing = wanted.filter((c) => !header.includes(c));
  if (missing.length) fail(`no such column(s): ${missing.join(', ')}; the columns are: ${header.join(', ')}`);
}
const stats = {};
let rows = 0;
for (const row of body) {
  if (!row.some((cell) => cell.trim() !== '')) continue;
  rows++;
  header.forEach((col, i) => {
    if (wanted?.length && !wanted.includes(col)) return;
    const raw = (row[i] ?? '').trim();
    const s = (stats[col] ??= { count: 0, skipped: 0, sum: 0, min: null, max: null });
    if (!NUMBER.test(raw)) {
      s.skipped++;
      return;
    }
    const v = Number(raw);
    s.count++;
    s.sum += v;
    s.min = s.min === null ? v : Math.min(s.min, v);
    s.max = s.max === null ? v : Math.max(s.max, v);
  });
}
const columns = {};
for (const col of header) {
  const s = stats[col];
  if (!s || (s.count === 0 && !wanted?.length)) continue; // not numeric
  columns[col] = { ...s, sum: Number.isFinite(s.sum) ? s.sum : null, mean: s.count ? s.sum / s.count : null };
}
const result = { file: rel, rows, columns };

if (args.output) {
  if (typeof args.output !== 'string' || !args.output.startsWith('outputs/')) fail('"output" must be a path under outputs/, e.g. outputs/stats.json');
  const target = inside(args.output, 'output', false);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, JSON.stringify(result, null, 2));
  result.output = args.output;
}
console.log(JSON.stringify(result));
