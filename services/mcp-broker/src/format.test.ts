import { describe, expect, it } from 'vitest';
import { formatResult, truncateUtf8 } from './format.js';

describe('formatResult', () => {
  it('joins text parts with newlines', () => {
    expect(
      formatResult(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        1024,
      ),
    ).toEqual({ text: 'a\nb', isError: false });
  });

  it('summarizes images, audio and resources', () => {
    const { text } = formatResult(
      {
        content: [
          { type: 'image', mimeType: 'image/png', data: Buffer.alloc(1234).toString('base64') },
          { type: 'audio', mimeType: 'audio/wav', data: Buffer.alloc(10).toString('base64') },
          { type: 'resource_link', uri: 'file:///a.pdf', name: 'a.pdf' },
          { type: 'resource', resource: { uri: 'file:///b.bin', mimeType: 'application/octet-stream', blob: Buffer.alloc(5).toString('base64') } },
          { type: 'resource', resource: { uri: 'file:///c.txt', text: 'inline text' } },
        ],
      },
      4096,
    );
    expect(text.split('\n')).toEqual([
      '[image: image/png, 1234 bytes]',
      '[audio: audio/wav, 10 bytes]',
      '[resource: file:///a.pdf (a.pdf)]',
      '[resource file:///b.bin: application/octet-stream, 5 bytes]',
      '[resource: file:///c.txt]',
      'inline text',
    ]);
  });

  it('names the files binary parts were saved to, why one was not, and the tool that reads a resource link', () => {
    const content = [
      { type: 'image', mimeType: 'image/png', data: Buffer.alloc(4033).toString('base64') },
      { type: 'audio', mimeType: 'audio/wav', data: Buffer.alloc(10).toString('base64') },
      { type: 'resource_link', uri: 'demo://resource/dynamic/text/2', name: 'Text Resource 2', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'demo://b', mimeType: 'application/pdf', blob: Buffer.alloc(5).toString('base64') } },
    ];
    const saved = new Map([
      [0, { path: 'outputs/mcp/everything-get-tiny-image-1.png', bytes: 4033 }],
      [1, { error: 'not saved: larger than the 5-byte limit (MCP_MAX_MEDIA_BYTES)', bytes: 10 }],
      [3, { path: 'outputs/mcp/everything-read_resource-1.pdf', bytes: 5 }],
    ]);
    const { text } = formatResult({ content }, 4096, { saved, readResourceTool: 'everything_read_resource' });
    expect(text.split('\n')).toEqual([
      '[image saved to outputs/mcp/everything-get-tiny-image-1.png (image/png, 4033 bytes)]',
      '[audio: audio/wav, 10 bytes, not saved: larger than the 5-byte limit (MCP_MAX_MEDIA_BYTES)]',
      '[resource: demo://resource/dynamic/text/2 (Text Resource 2, text/plain); read it with everything_read_resource]',
      '[resource demo://b saved to outputs/mcp/everything-read_resource-1.pdf (application/pdf, 5 bytes)]',
    ]);
  });

  it('uses structuredContent as JSON when there is no text', () => {
    expect(formatResult({ content: [], structuredContent: { sum: 3 } }, 1024).text).toBe('{"sum":3}');
    expect(formatResult({ content: [{ type: 'text', text: 'txt' }], structuredContent: { sum: 3 } }, 1024).text).toBe('txt');
  });

  it('passes isError through', () => {
    expect(formatResult({ content: [{ type: 'text', text: 'bad' }], isError: true }, 1024)).toEqual({ text: 'bad', isError: true });
  });

  it('says so when there is no content at all', () => {
    expect(formatResult({ content: [] }, 1024).text).toBe('(no content)');
  });

  it('caps the text with a note saying how much was cut', () => {
    const { text } = formatResult({ content: [{ type: 'text', text: 'x'.repeat(5000) }] }, 1024);
    expect(text.startsWith('x'.repeat(1024) + '\n')).toBe(true);
    expect(text).not.toContain('x'.repeat(1025));
    expect(text).toContain('[result truncated: 5000 bytes, the first 1024 shown]');
  });

  it('never cuts a UTF-8 character in half', () => {
    const cut = truncateUtf8('é'.repeat(10), 5); // 2 bytes each
    expect(cut).toBe('éé');
    expect(cut).not.toContain('\uFFFD');
  });
});
