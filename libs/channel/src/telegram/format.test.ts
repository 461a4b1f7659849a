import { describe, expect, it } from 'vitest';
import { markdownToTelegram, splitText, TELEGRAM_MAX_MESSAGE } from './format.js';

describe('markdownToTelegram', () => {
  it('renders markdown as the HTML subset Telegram accepts, escaping everything else', () => {
    const [html] = markdownToTelegram('# Plan\n\n**Bold** and *it* with `a<b` & <script>\n\n- one\n- [site](https://example.com/?a=1&b=2)');
    expect(html).toBe(
      '<b>Plan</b>\n\n<b>Bold</b> and <i>it</i> with <code>a&lt;b</code> &amp; &lt;script&gt;\n\n• one\n• <a href="https://example.com/?a=1&amp;b=2">site</a>',
    );
  });

  it('keeps code blocks as pre with their language and drops unsafe link schemes', () => {
    const [html] = markdownToTelegram('```js\nif (a < b) {}\n```\n\n[click](javascript:alert(1))');
    expect(html).toBe('<pre><code class="language-js">if (a &lt; b) {}</code></pre>\n\nclick');
  });

  it('splits a long answer into messages of at most 4096 characters, between paragraphs', () => {
    const paragraph = 'word '.repeat(300).trim(); // 1499 characters
    const messages = markdownToTelegram(Array.from({ length: 6 }, () => paragraph).join('\n\n'));
    expect(messages.length).toBe(3);
    for (const m of messages) expect(m.length).toBeLessThanOrEqual(TELEGRAM_MAX_MESSAGE);
    expect(messages.join('\n\n')).toBe(Array.from({ length: 6 }, () => paragraph).join('\n\n'));
  });

  it('cuts one block longer than a message, a code block staying code in every piece', () => {
    const code = Array.from({ length: 600 }, (_, i) => `line ${i} <&>`).join('\n');
    const messages = markdownToTelegram('```\n' + code + '\n```');
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) {
      expect(m.length).toBeLessThanOrEqual(TELEGRAM_MAX_MESSAGE);
      expect(m).toMatch(/^<pre>[\s\S]*<\/pre>$/);
    }
    const back = messages.map((m) => m.slice(5, -6).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')).join('\n');
    expect(back).toBe(code);
  });
});

describe('splitText', () => {
  it('cuts at line ends', () => {
    expect(splitText('aaaa\nbbbb\ncccc', 10)).toEqual(['aaaa\nbbbb', 'cccc']);
  });
});
