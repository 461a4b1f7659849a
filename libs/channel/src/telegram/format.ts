import { marked, type Token, type Tokens } from 'marked';

/** Longest text of one Telegram message (Bot API sendMessage). */
export const TELEGRAM_MAX_MESSAGE = 4096;

/** Escapes text for Telegram's HTML parse mode (only `&`, `<`, `>` are special there). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const SAFE_LINK = /^(https?:|tg:|mailto:)/i;

function inline(tokens: readonly Token[] | undefined): string {
  return (tokens ?? []).map(inlineToken).join('');
}

function inlineToken(t: Token): string {
  switch (t.type) {
    case 'strong':
      return `<b>${inline((t as Tokens.Strong).tokens)}</b>`;
    case 'em':
      return `<i>${inline((t as Tokens.Em).tokens)}</i>`;
    case 'del':
      return `<s>${inline((t as Tokens.Del).tokens)}</s>`;
    case 'codespan':
      return `<code>${escapeHtml((t as Tokens.Codespan).text)}</code>`;
    case 'br':
      return '\n';
    case 'link': {
      const link = t as Tokens.Link;
      const label = inline(link.tokens) || escapeHtml(link.href);
      return SAFE_LINK.test(link.href) ? `<a href="${escapeHtml(link.href).replace(/"/g, '&quot;')}">${label}</a>` : label;
    }
    case 'image': {
      const img = t as Tokens.Image;
      return SAFE_LINK.test(img.href)
        ? `<a href="${escapeHtml(img.href).replace(/"/g, '&quot;')}">${escapeHtml(img.text || img.href)}</a>`
        : escapeHtml(img.text);
    }
    case 'text': {
      const text = t as Tokens.Text;
      return text.tokens?.length ? inline(text.tokens) : escapeHtml(text.text);
    }
    default:
      return escapeHtml('raw' in t && typeof t.raw === 'string' ? t.raw : '');
  }
}

/** One top-level block of the answer as Telegram HTML, with its plain text (to split a block too long for one message). */
interface Block {
  html: string;
  plain: string;
  /** Code keeps its `<pre>` when split. */
  code: boolean;
}

function listHtml(list: Tokens.List, depth: number): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, i) => {
      const bullet = list.ordered ? `${start + i}.` : '•';
      const body = item.tokens
        .map((t) => (t.type === 'list' ? `\n${listHtml(t as Tokens.List, depth + 1)}` : blockHtml(t)))
        .join('')
        .trim();
      return `${'  '.repeat(depth)}${bullet} ${body}`;
    })
    .join('\n');
}

function blockHtml(t: Token): string {
  switch (t.type) {
    case 'heading':
      return `<b>${inline((t as Tokens.Heading).tokens)}</b>`;
    case 'paragraph':
      return inline((t as Tokens.Paragraph).tokens);
    case 'text': {
      const text = t as Tokens.Text;
      return text.tokens?.length ? inline(text.tokens) : escapeHtml(text.text);
    }
    case 'code': {
      const code = t as Tokens.Code;
      const lang = code.lang && /^[\w+-]+$/.test(code.lang) ? ` class="language-${code.lang}"` : '';
      return `<pre><code${lang}>${escapeHtml(code.text)}</code></pre>`;
    }
    case 'blockquote':
      return `<blockquote>${(t as Tokens.Blockquote).tokens.map(blockHtml).join('\n')}</blockquote>`;
    case 'list':
      return listHtml(t as Tokens.List, 0);
    case 'hr':
      return '──────────';
    case 'table':
      // Telegram has no tables: the source, monospaced, keeps the columns readable.
      return `<pre>${escapeHtml((t as Tokens.Table).raw.trim())}</pre>`;
    case 'space':
      return '';
    default:
      return escapeHtml('raw' in t && typeof t.raw === 'string' ? t.raw.trim() : '');
  }
}

/**
 * Markdown (what models write) as the HTML subset Telegram's `parse_mode: "HTML"` accepts — b, i, s,
 * code, pre, a, blockquote — split into messages of at most 4096 characters. Blocks are kept whole
 * when they fit; a longer block is cut at line ends (a code block stays a code block in every piece).
 */
export function markdownToTelegram(markdown: string, max = TELEGRAM_MAX_MESSAGE): string[] {
  const blocks: Block[] = marked
    .lexer(markdown)
    .map((t) => ({ html: blockHtml(t), plain: t.type === 'code' ? (t as Tokens.Code).text : t.raw.trim(), code: t.type === 'code' }))
    .filter((b) => b.html.trim() !== '');
  const messages: string[] = [];
  let current = '';
  const flush = () => {
    if (current.trim()) messages.push(current);
    current = '';
  };
  for (const block of blocks) {
    if (block.html.length > max) {
      flush();
      const wrap = block.code ? (s: string) => `<pre>${escapeHtml(s)}</pre>` : escapeHtml;
      const overhead = block.code ? '<pre></pre>'.length : 0;
      messages.push(...fitted(block.plain, wrap, max - overhead, max));
      continue;
    }
    const joined = current ? `${current}\n\n${block.html}` : block.html;
    if (joined.length > max) {
      flush();
      current = block.html;
    } else {
      current = joined;
    }
  }
  flush();
  return messages;
}

/** Pieces of `text` whose wrapped (escaped) form fits `max`: escaping can grow a piece (`<` → `&lt;`), then it is cut again. */
function fitted(text: string, wrap: (s: string) => string, size: number, max: number): string[] {
  return splitText(text, size).flatMap((piece) => (wrap(piece).length <= max || size < 2 ? [wrap(piece)] : fitted(piece, wrap, Math.floor(size / 2), max)));
}

/** Cuts text into pieces of at most `max` characters, at a line end (else a space) when there is one. */
export function splitText(text: string, max = TELEGRAM_MAX_MESSAGE): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n', max);
    if (cut < max / 2) cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) cut = max;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^[\n ]/, '');
  }
  if (rest) out.push(rest);
  return out;
}
