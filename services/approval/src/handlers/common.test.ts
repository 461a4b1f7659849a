import { describe, expect, it } from 'vitest';
import { argsSha256, argsSha256Paced, canonicalJson } from './common.js';

describe('argsSha256Paced', () => {
  it('gives the digest argsSha256 gives, for small and long arguments (slices never split a surrogate pair)', async () => {
    // 256 Ki characters per slice: put an emoji (a surrogate pair) across the first boundary.
    const long = `${'a'.repeat(256 * 1024 - 12)}😀${'b'.repeat(300_000)}😀`;
    const cases: Array<Record<string, unknown>> = [
      {},
      { url: 'https://x', token: 's3cret' },
      { b: [1, null, { z: true, a: 'é\u0000"\\' }], a: 'x' },
      { content: long, file_path: 'outputs/a' },
      { nested: { list: [long, long.slice(5)] } },
    ];
    for (const args of cases) expect(await argsSha256Paced(args), canonicalJson(args).slice(0, 40)).toBe(argsSha256(args));
  });
});
