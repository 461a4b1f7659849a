import { silentLogger } from '@agentloop/core';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPdf } from '../testing/index.js';
import { ExtractError } from './errors.js';
import { ExtractorPool } from './pool.js';
import type { ExtractLimits } from './types.js';

const limits: ExtractLimits = {
  maxUnits: {},
  maxChars: 1_000_000,
  zip: { maxTotalBytes: 1 << 26, maxEntryBytes: 1 << 25, maxEntries: 100 },
  xlsxMaxCells: 1000,
  xlsxMaxRows: 1000,
};
const pool = new ExtractorPool({ size: 1, maxHeapMb: 256, timeoutMs: 60_000, logger: silentLogger() });
afterAll(() => pool.close());

const job = () => ({ op: 'extract' as const, bytes: buildPdf(['pooled text']), sniffed: 'pdf' as const, claimed: 'pdf' as const, limits });

describe('ExtractorPool', () => {
  it('extracts in a worker thread', async () => {
    const res = await pool.run(job());
    expect(res.extraction?.units[0]?.text).toBe('pooled text');
  });

  it('stops a job past its timeout and serves the next one on a fresh worker', async () => {
    // A 3,000-page document cannot be extracted within 1 ms, however fast the machine.
    const heavy = { ...job(), bytes: buildPdf(Array.from({ length: 3000 }, (_, i) => `page ${i} of a long document`)) };
    const err = await pool.run(heavy, undefined, 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ExtractError);
    expect(err).toMatchObject({ code: 'TIMEOUT', message: 'extraction took longer than 1 ms and was stopped' });
    const res = await pool.run(job());
    expect(res.extraction?.total).toBe(1);
  });

  it('refuses jobs after close', async () => {
    const closed = new ExtractorPool({ size: 1, maxHeapMb: 64, timeoutMs: 1000, logger: silentLogger() });
    await closed.close();
    await expect(closed.run(job())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
