/**
 * Images and audio passed back with a result for a model that takes them (ExecuteToolResponse.media,
 * issue 14): which parts become blocks, and the per-block and per-result caps. The reply over the
 * bus from a real MCP server is in service.content.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { resultMedia } from './media.js';

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
