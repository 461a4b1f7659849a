// Per-column statistics of a CSV file (same contract as stats.py). Simple CSV: no quoted commas.
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

const args = JSON.parse(readFileSync(0, 'utf8') || '{}');
const workspace = realpathSync(process.env.AGENT_WORKSPACE_PATH);
if (typeof args.file !== 'string' || args.file === '') {
  console.error('args.file (a workspace-relative CSV path) is required');
  process.exit(2);
}
const file = realpathSync(path.join(workspace, args.file));
if (!file.startsWith(workspace + path.sep)) {
  console.error(`${args.file} is outside the workspace`);
  process.exit(2);
}
const [header, ...lines] = readFileSync(file, 'utf8').split(/\r?\n/).filter((l) => l !== '');
const cols = header.split(',');
const wanted = Array.isArray(args.columns) ? args.columns : undefined;
const stats = {};
for (const line of lines) {
  line.split(',').forEach((raw, i) => {
    const col = cols[i];
    if (col === undefined || (wanted && !wanted.includes(col))) return;
    const s = (stats[col] ??= { count: 0, skipped: 0, sum: 0, min: null, max: null });
    const v = Number(raw);
    if (raw.trim() === '' || Number.isNaN(v)) {
      s.skipped++;
      return;
    }
    s.count++;
    s.sum += v;
    s.min = s.min === null ? v : Math.min(s.min, v);
    s.max = s.max === null ? v : Math.max(s.max, v);
  });
}
const out = {};
for (const [col, s] of Object.entries(stats)) {
  if (s.count === 0 && !wanted) continue;
  out[col] = { ...s, mean: s.count ? s.sum / s.count : null };
}
console.log(JSON.stringify({ rows: lines.length, columns: out }));
