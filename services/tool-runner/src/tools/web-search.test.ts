import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@agentloop/core';
import { loadToolRunnerConfig } from '../config.js';
import { createToolHarness, startFakeProviders, type FakeHit, type FakeProviders, type ToolHarness } from '../testing/index.js';
import { providerToolOptions, providerTools } from './provider-tools.js';

// Every provider here is a local fake on 127.0.0.1; nothing leaves the machine.

const HITS: FakeHit[] = Array.from({ length: 15 }, (_, i) => ({
  title: `Result ${i + 1} &amp; more`,
  url: `https://example.org/page-${i + 1}`,
  snippet: `Snippet number ${i + 1}`,
}));

let fake: FakeProviders;
beforeAll(async () => {
  fake = await startFakeProviders(HITS);
});
afterAll(() => fake.close());

let h: ToolHarness | undefined;
afterEach(async () => {
  await h?.[Symbol.asyncDispose]();
  h = undefined;
});

/** A harness whose provider tools are configured by `env` (nothing else of the fakes' env). */
async function withEnv(env: Record<string, string>): Promise<ToolHarness> {
  h = await createToolHarness({ env });
  for (const tool of providerTools(providerToolOptions(h.config))) h.registry.register(tool);
  return h;
}

type SearchAnswer = { provider: string; query: string; results: { title: string; url: string; snippet: string }[] };

async function search(harness: ToolHarness, args: Record<string, unknown>): Promise<SearchAnswer> {
  const res = await harness.call('web_search', args);
  expect(res.error).toBeUndefined();
  return JSON.parse(res.content) as SearchAnswer;
}

const allow = () => ({ TOOL_PROVIDERS_ALLOW: `127.0.0.1:${fake.port}` });
const since = (n: number) => fake.requests.slice(n);

describe('web_search', () => {
  it('asks SearXNG for JSON and answers title/url/snippet, 5 results by default', async () => {
    const harness = await withEnv({ ...allow(), WEB_SEARCH_SEARXNG_URL: `${fake.origin}/searxng/` });
    const before = fake.requests.length;
    const answer = await search(harness, { query: 'orbital warehouse' });
    expect(answer.provider).toBe('searxng');
    expect(answer.query).toBe('orbital warehouse');
    expect(answer.results).toHaveLength(5);
    expect(answer.results[0]).toEqual({ title: 'Result 1 & more', url: 'https://example.org/page-1', snippet: 'Snippet number 1' });
    const [req] = since(before);
    const url = new URL(req!.url, 'http://x');
    expect(req!.method).toBe('GET');
    expect(url.pathname).toBe('/searxng/search');
    expect(url.searchParams.get('q')).toBe('orbital warehouse');
    expect(url.searchParams.get('format')).toBe('json');
  });

  it('bounds max_results by WEB_SEARCH_MAX_RESULTS', async () => {
    const harness = await withEnv({ ...allow(), WEB_SEARCH_SEARXNG_URL: `${fake.origin}/searxng`, WEB_SEARCH_MAX_RESULTS: '3' });
    expect((await search(harness, { query: 'q', max_results: 50 })).results.map((r) => r.url)).toEqual([
      'https://example.org/page-1',
      'https://example.org/page-2',
      'https://example.org/page-3',
    ]);
    expect((await search(harness, { query: 'q', max_results: 2 })).results).toHaveLength(2);
    const bad = await harness.call('web_search', { query: 'q', max_results: 0 });
    expect(bad.content).toMatch(/^Error: .*max_results/);
  });

  it('sends the Brave key as X-Subscription-Token with count, and strips the snippet markup', async () => {
    const harness = await withEnv({ ...allow(), WEB_SEARCH_BRAVE_API_KEY: 'brave-secret', WEB_SEARCH_BRAVE_URL: `${fake.origin}/brave/res/v1/web/search` });
    const before = fake.requests.length;
    const answer = await search(harness, { query: 'lunar office', max_results: 4 });
    expect(answer.provider).toBe('brave');
    expect(answer.results).toHaveLength(4);
    expect(answer.results[3]).toEqual({ title: 'Result 4 & more', url: 'https://example.org/page-4', snippet: 'Snippet number 4' });
    const [req] = since(before);
    expect(req!.headers['x-subscription-token']).toBe('brave-secret');
    const url = new URL(req!.url, 'http://x');
    expect(url.searchParams.get('q')).toBe('lunar office');
    expect(url.searchParams.get('count')).toBe('4');
  });

  it('POSTs to Tavily with a Bearer key and a JSON body', async () => {
    const harness = await withEnv({ ...allow(), WEB_SEARCH_TAVILY_API_KEY: 'tvly-secret', WEB_SEARCH_TAVILY_URL: `${fake.origin}/tavily/search` });
    const before = fake.requests.length;
    const answer = await search(harness, { query: 'migration plan', max_results: 2 });
    expect(answer).toEqual({
      provider: 'tavily',
      query: 'migration plan',
      results: [
        { title: 'Result 1 & more', url: 'https://example.org/page-1', snippet: 'Snippet number 1' },
        { title: 'Result 2 & more', url: 'https://example.org/page-2', snippet: 'Snippet number 2' },
      ],
    });
    const [req] = since(before);
    expect(req!.method).toBe('POST');
    expect(req!.headers.authorization).toBe('Bearer tvly-secret');
    expect(JSON.parse(req!.body.toString())).toMatchObject({ query: 'migration plan', max_results: 2 });
  });

  it('uses WEB_SEARCH_PROVIDER when several are configured, and refuses at boot one that is not', async () => {
    const env = {
      ...allow(),
      WEB_SEARCH_SEARXNG_URL: `${fake.origin}/searxng`,
      WEB_SEARCH_TAVILY_API_KEY: 'tvly-secret',
      WEB_SEARCH_TAVILY_URL: `${fake.origin}/tavily/search`,
    };
    expect((await search(await withEnv(env), { query: 'q' })).provider).toBe('searxng');
    await h?.[Symbol.asyncDispose]();
    expect((await search(await withEnv({ ...env, WEB_SEARCH_PROVIDER: 'tavily' }), { query: 'q' })).provider).toBe('tavily');
    const config = loadToolRunnerConfig({ WEB_SEARCH_PROVIDER: 'brave', WEB_SEARCH_SEARXNG_URL: fake.origin });
    expect(() => providerToolOptions(config)).toThrow(ConfigError);
    expect(() => providerToolOptions(config)).toThrow('WEB_SEARCH_PROVIDER: "brave" is chosen but WEB_SEARCH_BRAVE_API_KEY is not set');
  });

  it('is off when no provider is configured: not offered, and says so when called', async () => {
    const harness = await withEnv({});
    expect(harness.registry.names()).not.toContain('web_search');
    expect(harness.registry.discovered().map((r) => r.def.name)).toContain('web_search');
    const refused = await harness.call('web_search', { query: 'q' });
    expect(refused.content).toMatch(/^Error: Tool web_search is not enabled/);
    // @mentioned, it runs and explains what turns it on.
    const mentioned = await harness.executor.execute({
      tenantId: 'tenant-a',
      threadId: 'thread-1',
      runId: 'run-1',
      toolCallId: 'call-m',
      toolName: 'web_search',
      argsJson: '{"query":"q"}',
      onDemand: true,
    });
    expect(mentioned.content).toBe(
      'Error: Web search is off on this server: no search provider is configured (the operator sets WEB_SEARCH_SEARXNG_URL, WEB_SEARCH_BRAVE_API_KEY or WEB_SEARCH_TAVILY_API_KEY).',
    );
  });

  it('refuses a provider on a private address without TOOL_PROVIDERS_ALLOW, sending nothing', async () => {
    const harness = await withEnv({ WEB_SEARCH_SEARXNG_URL: `${fake.origin}/searxng` });
    const before = fake.requests.length;
    const res = await harness.call('web_search', { query: 'q' });
    expect(res.content).toMatch(
      /^Error: Refused to reach the web search provider \(searxng\) http:\/\/127\.0\.0\.1:\d+\/searxng\/search\?q=q&format=json: 127\.0\.0\.1 is an internal address/,
    );
    expect(res.content).toContain('must be listed in TOOL_PROVIDERS_ALLOW');
    expect(since(before)).toEqual([]);
    // An allow entry for another port does not cover it either.
    await h?.[Symbol.asyncDispose]();
    const other = await withEnv({ WEB_SEARCH_SEARXNG_URL: `${fake.origin}/searxng`, TOOL_PROVIDERS_ALLOW: `127.0.0.1:${fake.port === 1 ? 2 : 1}` });
    expect((await other.call('web_search', { query: 'q' })).content).toContain('internal address');
    expect(since(before)).toEqual([]);
  });

  it('turns provider failures into tool errors naming the provider', async () => {
    const down = await withEnv({ ...allow(), WEB_SEARCH_SEARXNG_URL: `${fake.origin}/fail` });
    expect((await down.call('web_search', { query: 'q' })).content).toBe(
      `Error: The web search provider (searxng) at ${fake.origin} answered HTTP 500: the fake provider is down`,
    );
    await h?.[Symbol.asyncDispose]();
    const wrongPath = await withEnv({ ...allow(), WEB_SEARCH_SEARXNG_URL: `${fake.origin}/nothing` });
    expect((await wrongPath.call('web_search', { query: 'q' })).content).toContain('answered HTTP 404: no fake at GET /nothing/search');
    await h?.[Symbol.asyncDispose]();
    const hanging = await withEnv({ ...allow(), WEB_SEARCH_SEARXNG_URL: `${fake.origin}/hang`, WEB_SEARCH_TIMEOUT_MS: '200' });
    expect((await hanging.call('web_search', { query: 'q' })).content).toBe(
      `Error: The web search provider (searxng) at ${fake.origin} did not answer within 200 ms`,
    );
  });

  it('answers an unreachable provider with a tool error', async () => {
    const closed = await startFakeProviders();
    const origin = closed.origin;
    await closed.close();
    const harness = await withEnv({ TOOL_PROVIDERS_ALLOW: '127.0.0.1', WEB_SEARCH_SEARXNG_URL: origin });
    expect((await harness.call('web_search', { query: 'q' })).content).toBe(
      `Error: The web search provider (searxng) at ${origin} is unreachable: ECONNREFUSED`,
    );
  });
});
