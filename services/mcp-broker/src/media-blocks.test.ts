/**
 * Images and audio passed back with a result for a model that takes them (ExecuteToolResponse.media,
 * issue 14): which parts become blocks, the per-block and per-result caps, and the reply over the
 * memory bus from a real MCP server (the echo server's `picture`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Headers, MemoryBus, type Bus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { ExecuteToolRequestSchema, ExecuteToolResponseSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import { loadMcpBrokerConfig, parseMcpFile } from './config.js';
import { resultMedia } from './media.js';
import { MCP_SUBJECTS, createMcpBroker, type McpBroker } from './service.js';
import { ECHO_SERVER_SCRIPT, serverCommand } from './testing/index.js';

const b64 = (bytes: number, fill = 1) => Buffer.alloc(bytes, fill).toString('base64');

describe('resultMedia', () => {
  const limits = { maxBlockBytes: 1_000, maxTotalBytes: 2_500 };

  it('takes image and audio parts and image/audio blob resources, in order, decoded, with where they were saved', () => {
    const content = [
      { type: 'text', text: 'hi' },
      { type: 'image', data: b64(10, 7), mimeType: 'image/png' },
      { type: 'audio', data: b64(20, 8), mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///a.jpg', mimeType: 'image/jpeg', blob: b64(30, 9) } },
      { type: 'resource', resource: { uri: 'file:///a.pdf', mimeType: 'application/pdf', blob: b64(40) } },
      { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'x' } },
      { type: 'image', data: b64(10) }, // no MIME type: nothing to tell the model what it is
    ];
    const saved = new Map([
      [1, { path: 'outputs/mcp/s-t-1.png', bytes: 10 }],
      [2, { error: 'not saved: disk full', bytes: 20 }],
    ]);
    const { blocks, omitted } = resultMedia(content, saved, limits);
    expect(omitted).toBe(0);
    expect(blocks.map((b) => [b.kind, b.mimeType, b.data.length, b.data[0], b.savedPath])).toEqual([
      ['image', 'image/png', 10, 7, 'outputs/mcp/s-t-1.png'],
      ['audio', 'audio/wav', 20, 8, ''],
      ['image', 'image/jpeg', 30, 9, ''],
    ]);
  });

  it('leaves out a block over the per-block cap and blocks past the per-result total, keeping later ones that fit', () => {
    const content = [
      { type: 'image', data: b64(1_001), mimeType: 'image/png' }, // over maxBlockBytes
      { type: 'image', data: b64(1_000), mimeType: 'image/png' },
      { type: 'image', data: b64(1_000), mimeType: 'image/png' },
      { type: 'image', data: b64(600), mimeType: 'image/png' }, // 2,600 > 2,500
      { type: 'audio', data: b64(500), mimeType: 'audio/mpeg' }, // 2,500: fits exactly
    ];
    const { blocks, omitted } = resultMedia(content, undefined, limits);
    expect(blocks.map((b) => b.data.length)).toEqual([1_000, 1_000, 500]);
    expect(omitted).toBe(2);
  });

  it('passes nothing with a total cap of 0, and nothing for content that is not an array', () => {
    expect(resultMedia([{ type: 'image', data: b64(5), mimeType: 'image/png' }], undefined, { maxBlockBytes: 100, maxTotalBytes: 0 })).toEqual({
      blocks: [],
      omitted: 1,
    });
    expect(resultMedia(undefined, undefined, limits)).toEqual({ blocks: [], omitted: 0 });
  });
});

describe('ExecuteToolResponse.media over the bus', () => {
  let dir: string;
  let bus: Bus;
  let broker: McpBroker | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mcp-media-'));
    bus = new MemoryBus();
  });
  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
    await bus.close();
    await rm(dir, { recursive: true, force: true });
  });

  const echo = serverCommand(ECHO_SERVER_SCRIPT);
  async function picture(env: Record<string, string>, threadId: string) {
    broker = await createMcpBroker({
      bus,
      logger: silentLogger(),
      config: loadMcpBrokerConfig({ MCP_CALL_TIMEOUT_MS: '20000', WORKSPACE_ROOT: path.join(dir, 'workspaces'), ...env }),
      file: parseMcpFile(`servers:\n  echo: { command: ${JSON.stringify(echo.command)}, args: ${JSON.stringify(echo.args)}, always_available: true }\n`),
      env: { PATH: process.env.PATH },
    });
    await broker.start();
    const req = create(ExecuteToolRequestSchema, { tenantId: 'acme', threadId, toolName: 'echo_picture', argsJson: '{}', runId: 'run-1', toolCallId: 'c1' });
    const reply = await bus.request(MCP_SUBJECTS.toolsExecute, toBinary(ExecuteToolRequestSchema, req), {
      timeoutMs: 30_000,
      headers: { [Headers.tenant]: 'acme' },
    });
    return fromBinary(ExecuteToolResponseSchema, reply.data);
  }

  it("carries the picture's PNG bytes and saved path beside the text naming the file", async () => {
    const res = await picture({}, 'thread-1');
    expect(res.content).toContain('[image saved to outputs/mcp/echo-picture-1.png (image/png, 70 bytes)]');
    expect(res.media).toHaveLength(1);
    const [m] = res.media;
    expect({ kind: m!.kind, mimeType: m!.mimeType, savedPath: m!.savedPath, bytes: m!.data.length }).toEqual({
      kind: 'image',
      mimeType: 'image/png',
      savedPath: 'outputs/mcp/echo-picture-1.png',
      bytes: 70,
    });
    expect(Buffer.from(m!.data).subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('sends no media when MCP_MAX_RESULT_MEDIA_BYTES is 0; without a thread the block is not saved but still sent', async () => {
    expect((await picture({ MCP_MAX_RESULT_MEDIA_BYTES: '0' }, 'thread-1')).media).toEqual([]);
    await broker?.stop();
    broker = undefined;
    const unsaved = await picture({}, '');
    expect(unsaved.media.map((m) => [m.mimeType, m.savedPath, m.data.length])).toEqual([['image/png', '', 70]]);
  });
});
