import { z } from 'zod';
import { ToolError } from '../errors.js';
import { defineTool, type ToolDefinition } from '../registry.js';
import type { WebSearchProvider } from './web-search-providers.js';

export const WebSearchArgs = z.object({
  query: z.string().trim().min(1).max(400).describe('What to search the web for'),
  max_results: z.number().int().min(1).optional().describe('How many results to return (default 5; capped by the server)'),
});
export type WebSearchArgs = z.infer<typeof WebSearchArgs>;

export interface WebSearchOptions {
  /** The configured provider; undefined when none is: the tool is then off (see below). */
  provider: WebSearchProvider | undefined;
  /** Upper bound of max_results (WEB_SEARCH_MAX_RESULTS). */
  maxResults: number;
}

export const WEB_SEARCH_DEFAULT_RESULTS = 5;

/** What an unconfigured web_search answers, naming the variables that turn it on. */
export const WEB_SEARCH_OFF_MESSAGE =
  'Web search is off on this server: no search provider is configured ' +
  '(the operator sets WEB_SEARCH_SEARXNG_URL, WEB_SEARCH_BRAVE_API_KEY or WEB_SEARCH_TAVILY_API_KEY).';

/**
 * web_search (seed 003): results as JSON `{provider, query, results: [{title, url, snippet}]}`.
 * Without a provider the tool stays discovered but disabled: it is not offered to the model (a tool
 * that can only fail wastes a step and invites retries), and a call that reaches it anyway (an
 * @mention, a scripted model) answers that web search is off and what turns it on.
 */
export function createWebSearchTool(opts: WebSearchOptions): ToolDefinition<typeof WebSearchArgs> {
  const { provider } = opts;
  const defaultCount = Math.min(WEB_SEARCH_DEFAULT_RESULTS, opts.maxResults);
  return defineTool({
    name: 'web_search',
    description: provider
      ? `Search the web. Returns JSON with up to ${opts.maxResults} results, each {title, url, snippet}. ` +
        'Use http_fetch (when available) to read a page in full.'
      : `Web search (off on this server: no search provider is configured).`,
    schema: WebSearchArgs,
    usesWorkspace: false,
    metadata: {
      category: 'network',
      tags: ['network', 'search', 'web'],
      idempotent: true,
      displayName: 'Web Search',
      availableToSubagent: false,
      enabled: provider !== undefined,
    },
    async execute(args, ctx) {
      if (!provider) throw new ToolError('UNAVAILABLE', WEB_SEARCH_OFF_MESSAGE, { retryable: false });
      const count = Math.min(args.max_results ?? defaultCount, opts.maxResults);
      const results = await provider.search(args.query, count, ctx.signal);
      return JSON.stringify({ provider: provider.name, query: args.query, results }, null, 2);
    },
  });
}
