import { mkdtemp, readFile, readdir, rm, symlink, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import { WorkspaceManager } from '@agentloop/workspace';
import { extensionOf, saveMedia, saveResultMedia, type MediaTarget } from './media.js';

let root: string;
let target: MediaTarget;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mcp-media-'));
  target = { workspaces: new WorkspaceManager({ root, logger: silentLogger() }), tenantId: 'acme', threadId: 't1', maxBytes: 1024 };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const b64 = (bytes: number[] | Buffer) => Buffer.from(bytes).toString('base64');

describe('saving binary MCP content to the workspace', () => {
  it('writes each image, audio and blob part to outputs/mcp/<server>-<tool>-<n>.<ext>, never overwriting', async () => {
    const content = [
      { type: 'text', text: 'hello' },
      { type: 'image', mimeType: 'image/png', data: b64([1, 2, 3]) },
      { type: 'audio', mimeType: 'audio/wav', data: b64([4, 5]) },
      { type: 'resource', resource: { uri: 'demo://x', mimeType: 'application/pdf', blob: b64([6]) } },
      { type: 'image', mimeType: 'image/x-unheard-of', data: b64([7]) },
    ];
    const saved = await saveResultMedia(content, target, 'everything', 'shot');
    expect([...saved.entries()]).toEqual([
      [1, { path: 'outputs/mcp/everything-shot-1.png', bytes: 3 }],
      [2, { path: 'outputs/mcp/everything-shot-1.wav', bytes: 2 }],
      [3, { path: 'outputs/mcp/everything-shot-1.pdf', bytes: 1 }],
      [4, { path: 'outputs/mcp/everything-shot-1.bin', bytes: 1 }],
    ]);
    const ws = path.join(root, 'acme', 't1');
    expect([...(await readFile(path.join(ws, 'outputs/mcp/everything-shot-1.png')))]).toEqual([1, 2, 3]);
    const again = await saveResultMedia(content.slice(0, 2), target, 'everything', 'shot');
    expect(again.get(1)).toEqual({ path: 'outputs/mcp/everything-shot-2.png', bytes: 3 });
    expect((await readdir(path.join(ws, 'outputs/mcp'))).sort()).toEqual([
      'everything-shot-1.bin',
      'everything-shot-1.pdf',
      'everything-shot-1.png',
      'everything-shot-1.wav',
      'everything-shot-2.png',
    ]);
  });

  it('reports a part over the size cap instead of writing it', async () => {
    const r = await saveMedia({ ...target, maxBytes: 2048 }, 's-t', 'image/png', Buffer.alloc(4033).toString('base64'));
    expect(r).toEqual({ error: 'not saved: larger than the 2048-byte limit (MCP_MAX_MEDIA_BYTES)', bytes: 4033 });
    await expect(readdir(path.join(root, 'acme', 't1', 'outputs', 'mcp'))).rejects.toThrow();
  });

  it('does not follow an outputs/mcp symlink out of the workspace', async () => {
    const ws = await target.workspaces.ensure('acme', 't1');
    const outside = await mkdtemp(path.join(tmpdir(), 'mcp-media-outside-'));
    await mkdir(path.join(ws.root, 'outputs'), { recursive: true });
    await symlink(outside, path.join(ws.root, 'outputs', 'mcp'));
    const r = await saveMedia(target, 's-t', 'image/png', b64([1]));
    expect(r).toMatchObject({ error: expect.stringMatching(/^not saved: .*outside/i) as unknown });
    expect(await readdir(outside)).toEqual([]);
    await rm(outside, { recursive: true, force: true });
  });

  it('a thread id that cannot be a folder name is not saved', async () => {
    const r = await saveMedia({ ...target, threadId: '../escape' }, 's-t', 'image/png', b64([1]));
    expect(r).toMatchObject({ error: expect.stringMatching(/^not saved: Invalid thread_id/) as unknown });
  });

  it('derives extensions from MIME types', () => {
    expect(extensionOf('image/jpeg')).toBe('jpg');
    expect(extensionOf('audio/wav')).toBe('wav');
    expect(extensionOf(undefined)).toBe('bin');
  });
});
