import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolHarness, type ToolHarness } from '../testing/index.js';
import { formatUtc } from './format.js';

let h: ToolHarness;
beforeEach(async () => {
  h = await createToolHarness();
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

describe('now', () => {
  it('answers the UTC time in the seed form and ISO 8601, both the same instant', async () => {
    const res = await h.call('now');
    const m = /^Current time: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) UTC\nISO 8601: (\S+)$/.exec(res.content);
    expect(m).not.toBeNull();
    const iso = m?.[2] ?? '';
    expect(new Date(iso).toISOString()).toBe(iso);
    expect(formatUtc(new Date(iso))).toBe(`${m?.[1] ?? ''} UTC`);
  });

  it('formats a known instant as "YYYY-MM-DD HH:MM:SS UTC"', () => {
    expect(formatUtc(new Date('2025-01-24T15:30:45.999Z'))).toBe('2025-01-24 15:30:45 UTC');
  });
});
