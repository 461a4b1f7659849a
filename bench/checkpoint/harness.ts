/** Timing, concurrency and table helpers for the checkpoint benchmark. */

export type Op = () => Promise<unknown>;

export interface Measurement {
  ops: number;
  seconds: number;
  opsPerSec: number;
}

/** Runs `ops` one after another and measures the wall time. */
export async function runSequential(ops: Op[]): Promise<Measurement> {
  const t0 = process.hrtime.bigint();
  for (const op of ops) await op();
  return measured(ops.length, t0);
}

/**
 * Runs `ops` with at most `concurrency` in flight (a promise pool: each worker
 * takes the next op as soon as its previous one resolves), in list order.
 */
export async function runPool(ops: Op[], concurrency: number): Promise<Measurement> {
  const t0 = process.hrtime.bigint();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ops.length) {
      const op = ops[next++]!;
      await op();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ops.length) }, worker));
  return measured(ops.length, t0);
}

function measured(ops: number, t0: bigint): Measurement {
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { ops, seconds, opsPerSec: ops / seconds };
}

export function geometricMean(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  return Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
}

/** Seeded PRNG (mulberry32) for reproducible read patterns. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A plain-text table with right-aligned numeric columns. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
