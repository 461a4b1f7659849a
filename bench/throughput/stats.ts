/** Percentiles and table formatting for bench/throughput. */

/** Nearest-rank percentile of `values` (ms); NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** `1234.5` → `1,235`; `12.345` → `12.3`; `0.1234` → `0.123`. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const abs = Math.abs(n);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const abs = Math.abs(n);
  if (abs >= 1024 * 1024) return `${fmt(n / (1024 * 1024))} MiB`;
  if (abs >= 1024) return `${fmt(n / 1024)} KiB`;
  return `${fmt(n)} B`;
}

/** A plain-text table: header row, a rule, then rows; numbers right-aligned. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const isNumeric = (s: string) => /^[-+~>≥≤<]?[\d,.]+(\s?[a-zA-Z%×x/]*)?$|^—$/.test(s.trim());
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i > 0 && isNumeric(c) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
