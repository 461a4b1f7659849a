/**
 * Word segmentation for every script: Intl.Segmenter (ICU word boundaries,
 * with its dictionaries for Chinese, Japanese, Thai and other scripts written
 * without spaces). Tokens are lower-cased word-like segments.
 */
const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

/** Common words that carry no meaning on their own: left out of keywords (not of phrases and n-grams). */
const STOPWORDS = new Set(
  (
    'a an and are as at be by for from has have in is it its of on or that the this to was were will with ' +
    '的 了 是 在 和 与 及 或 也 都 就 而 之 其 这 那 个 为 对 中 上 下 把 被 着 过'
  ).split(' '),
);

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const s of segmenter.segment(text.toLowerCase())) {
    if (s.isWordLike) out.push(s.segment);
  }
  return out;
}

export function isStopword(token: string): boolean {
  return STOPWORDS.has(token);
}

/** Distinct tokens of a query minus stopwords (all of them when only stopwords remain). */
export function keywordsOf(tokens: readonly string[]): string[] {
  const distinct = [...new Set(tokens)];
  const kept = distinct.filter((t) => !STOPWORDS.has(t));
  return kept.length > 0 ? kept : distinct;
}

/** True for tokens in a script written with spaces between words (Latin, Cyrillic, Greek...). */
export function isSpacedScript(token: string): boolean {
  return !/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u.test(token);
}

/** Lower-cased text with runs of whitespace collapsed to one space: what phrase matching compares. */
export function normalizeForPhrase(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}
