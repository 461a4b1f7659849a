import { ToolError } from '../errors.js';
import { callProvider, providerJson, type ProviderEndpoint } from './provider-request.js';

/** One hit, the same shape whatever the provider. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** A search backend: turns a query into at most `maxResults` results. */
export interface WebSearchProvider {
  /** "searxng", "brave", "tavily": shown to the model and in errors. */
  readonly name: string;
  search(query: string, maxResults: number, signal: AbortSignal): Promise<SearchResult[]>;
}

export const WEB_SEARCH_PROVIDERS = ['searxng', 'brave', 'tavily'] as const;
export type WebSearchProviderName = (typeof WEB_SEARCH_PROVIDERS)[number];

export const BRAVE_DEFAULT_URL = 'https://api.search.brave.com/res/v1/web/search';
export const TAVILY_DEFAULT_URL = 'https://api.tavily.com/search';

/** Provider answers larger than this are refused (a result page is a few tens of KB). */
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Longest snippet kept per result: the model needs a hint, not the page. */
const SNIPPET_CHARS = 500;

const label = (name: string) => `web search provider (${name})`;

/** SearXNG: `GET {base}/search?q=…&format=json` (the instance must enable the json format). */
export function searxngProvider(baseUrl: string, endpoint: ProviderEndpoint): WebSearchProvider {
  return {
    name: 'searxng',
    async search(query, maxResults, signal) {
      const url = new URL(`${baseUrl.replace(/\/+$/, '')}/search`);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const res = await callProvider(endpoint, {
        label: label('searxng'),
        url,
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'AgentLoop-web_search/1' },
        maxResponseBytes: MAX_RESPONSE_BYTES,
        signal,
      });
      const body = providerJson(res, label('searxng')) as { results?: unknown };
      return normalize(body.results, 'searxng', { snippet: 'content' }).slice(0, maxResults);
    },
  };
}

/** Brave Search API: `GET …/res/v1/web/search?q=…&count=…` with the X-Subscription-Token header. */
export function braveProvider(apiKey: string, baseUrl: string, endpoint: ProviderEndpoint): WebSearchProvider {
  return {
    name: 'brave',
    async search(query, maxResults, signal) {
      const url = new URL(baseUrl);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(maxResults));
      const res = await callProvider(endpoint, {
        label: label('brave'),
        url,
        method: 'GET',
        headers: { accept: 'application/json', 'x-subscription-token': apiKey, 'user-agent': 'AgentLoop-web_search/1' },
        maxResponseBytes: MAX_RESPONSE_BYTES,
        signal,
      });
      const body = providerJson(res, label('brave')) as { web?: { results?: unknown } };
      return normalize(body.web?.results ?? [], 'brave', { snippet: 'description' }).slice(0, maxResults);
    },
  };
}

/** Tavily: `POST /search` with a JSON body and `Authorization: Bearer <key>`. */
export function tavilyProvider(apiKey: string, baseUrl: string, endpoint: ProviderEndpoint): WebSearchProvider {
  return {
    name: 'tavily',
    async search(query, maxResults, signal) {
      const res = await callProvider(endpoint, {
        label: label('tavily'),
        url: new URL(baseUrl),
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${apiKey}`, 'user-agent': 'AgentLoop-web_search/1' },
        body: JSON.stringify({ query, max_results: maxResults, search_depth: 'basic', include_answer: false }),
        maxResponseBytes: MAX_RESPONSE_BYTES,
        signal,
      });
      const body = providerJson(res, label('tavily')) as { results?: unknown };
      return normalize(body.results, 'tavily', { snippet: 'content' }).slice(0, maxResults);
    },
  };
}

/**
 * Provider results → SearchResult, dropping entries without an http(s) URL; HTML tags some
 * providers put in snippets (Brave's <strong>) are removed. A body without a result list is an error.
 */
function normalize(raw: unknown, provider: string, fields: { snippet: string }): SearchResult[] {
  if (!Array.isArray(raw)) throw new ToolError('TOOL_FAILED', `The ${label(provider)} sent an answer without a result list`);
  const out: SearchResult[] = [];
  for (const item of raw as Record<string, unknown>[]) {
    if (typeof item !== 'object' || item === null) continue;
    const url = typeof item.url === 'string' ? item.url : '';
    if (!/^https?:\/\//i.test(url)) continue;
    const title = typeof item.title === 'string' ? plain(item.title) : '';
    const rawSnippet = item[fields.snippet];
    const snippet = typeof rawSnippet === 'string' ? plain(rawSnippet) : '';
    out.push({ title: title || url, url, snippet: snippet.length > SNIPPET_CHARS ? `${snippet.slice(0, SNIPPET_CHARS)}…` : snippet });
  }
  return out;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'", '&nbsp;': ' ' };

function plain(s: string): string {
  return s
    .replace(/<[^>]{0,200}>/g, '')
    .replace(/&(amp|lt|gt|quot|nbsp|#39|#x27);/g, (m) => ENTITIES[m] ?? m)
    .replace(/\s+/g, ' ')
    .trim();
}
