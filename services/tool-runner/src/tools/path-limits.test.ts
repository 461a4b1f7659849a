import type { Bus } from '@agentloop/bus';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolHarness, type ToolHarness } from '../testing/index.js';
import { createSearchFileTool } from './documents.js';

let h: ToolHarness;
let indexerCalls: number;

beforeEach(async () => {
  h = await createToolHarness();
  indexerCalls = 0;
  const bus = {
    request: () => {
      indexerCalls++;
      return Promise.reject(new Error('the indexer must not be asked'));
    },
  } as unknown as Bus;
  h.registry.register(createSearchFileTool({ bus, timeoutMs: 1_000 }));
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

/** `uploads/a/a/…` of about 200 KB, as in the issue. */
const LONG = `uploads/${'a/'.repeat(100_000)}x.txt`;

describe('every tool that takes a path refuses a 200 KB one before any filesystem work (issue 18)', () => {
  it.each([
    ['read_file', { file_path: LONG }],
    ['write_file', { file_path: LONG, content: 'x' }],
    ['write_file', { file_path: LONG, content: 'x', append: true }],
    ['list_workspace_files', { directory: LONG }],
    ['find_files', { pattern: '*', path: LONG }],
    ['search_file', { file_path: LONG, query: 'x' }],
  ])('%s', async (tool, args) => {
    const res = await h.call(tool, args);
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    expect(res.content).toMatch(
      /^Error: Path too long: 200013 bytes, more than the 4096 allowed \(Linux PATH_MAX\); use a shorter path: uploads\/a\/a\/.{40,}…$/,
    );
    expect(res.content.length).toBeLessThan(300);
    expect(res.content).not.toContain(h.workspace.root);
    expect(indexerCalls).toBe(0);
  });

  it('two 200 KB paths at once are both refused while other calls are served', async () => {
    const [a, b, now] = await Promise.all([h.call('read_file', { file_path: LONG }), h.call('read_file', { file_path: `/${LONG}` }), h.call('now')]);
    expect(a.error?.code).toBe('INVALID_ARGUMENT');
    expect(b.content).toContain('Path too long');
    expect(b.content).toContain('(an absolute path outside the workspace)');
    expect(now.error).toBeUndefined();
  });

  it('refuses a path of more than 128 segments and a name of more than 255 bytes', async () => {
    expect((await h.call('read_file', { file_path: `uploads/${'a/'.repeat(200)}` })).content).toMatch(
      /^Error: Path too deep: 201 segments, more than the 128 allowed/,
    );
    expect((await h.call('write_file', { file_path: `outputs/${'n'.repeat(256)}.txt`, content: 'x' })).content).toMatch(
      /^Error: Path has a name of 260 bytes, more than the 255 allowed/,
    );
  });
});
