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
      '[resource: file:///a.pdf]',
      '[resource: file:///b.bin, application/octet-stream, 5 bytes]',
      '[resource: file:///c.txt]',
      'inline text',
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
