import { Marked } from 'marked';
import { markedTerminal } from 'marked-terminal';

const marked = new Marked(markedTerminal({ reflowText: false, tab: 2 }));

/** An answer's markdown as terminal text (bold, lists, code blocks highlighted). */
export function renderMarkdown(text: string): string {
  const out = marked.parse(text, { async: false });
  return out.replace(/\n+$/, '');
}
