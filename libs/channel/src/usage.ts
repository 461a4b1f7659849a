import type { Client } from '@langchain/langgraph-sdk';

/** Tokens as AgentLoop counts them (`token_usage.thread` of a thread's values). */
export interface TokenCount {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

const ZERO: TokenCount = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
const PAGE = 100;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The thread total of a values object (`token_usage.thread`), zero when the thread never ran. */
export function threadTokens(values: unknown): TokenCount {
  const usage = (values as { token_usage?: { thread?: Record<string, unknown> } } | null)?.token_usage?.thread;
  if (!usage) return { ...ZERO };
  return { input_tokens: num(usage.input_tokens), output_tokens: num(usage.output_tokens), total_tokens: num(usage.total_tokens) };
}

export const addTokens = (a: TokenCount, b: TokenCount): TokenCount => ({
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens,
  total_tokens: a.total_tokens + b.total_tokens,
});

export async function sessionTokens(client: Client, threadId: string): Promise<TokenCount> {
  return threadTokens((await client.threads.getState(threadId)).values);
}

/**
 * Tokens of the whole tenant: AgentLoop has no usage endpoint, so this sums `token_usage.thread` over
 * every thread the API key can see (threads deleted since are not counted).
 */
export async function tenantTokens(client: Client): Promise<{ tokens: TokenCount; threads: number }> {
  let tokens = { ...ZERO };
  let threads = 0;
  for (let offset = 0; ; offset += PAGE) {
    const page = await client.threads.search({ limit: PAGE, offset, select: ['thread_id', 'values'] });
    for (const t of page) tokens = addTokens(tokens, threadTokens(t.values));
    threads += page.length;
    if (page.length < PAGE) return { tokens, threads };
  }
}

export const formatTokens = (t: TokenCount) => `${t.total_tokens} tokens (${t.input_tokens} in, ${t.output_tokens} out)`;
