import { describe, expect, it } from 'vitest';
import { contentText } from './timeline.js';

describe('the timeline preview of a message content', () => {
  it('keeps text and shows images and audio as a label, never their base64', () => {
    const base64 = 'iVBORw0KGgo'.repeat(500);
    const text = contentText([
      { type: 'text', text: 'Saved outputs/mcp/tiny_image-1.png' },
      { type: 'image', mimeType: 'image/png', data: base64 },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${base64}` } },
      { type: 'input_audio', mime_type: 'audio/wav' },
    ]);
    expect(text).toBe('Saved outputs/mcp/tiny_image-1.png\n[image: image/png]\n[image_url]\n[input_audio: audio/wav]');
    expect(contentText('plain')).toBe('plain');
    expect(contentText({ a: 1 })).toBe('{"a":1}');
  });
});
