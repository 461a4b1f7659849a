/**
 * Token budgets and usage (issue 17), embedded and cluster: tenant acme has a 1,000-token daily
 * budget. Its run of 500-token model calls is ended mid-way (the third call is refused) with
 * status `error`, error `token_budget_exceeded` and a last message naming the budget; its next
 * submission gets 429 with Retry-After until the next UTC midnight; tenant globex is unaffected.
 * A run's own `max_tokens_total` ends it the same way. `GET /usage` reports what the runs used.
 */
import { describe, expect, it } from 'vitest';
import { poll, useCluster, useEmbeddedServer } from './helpers.js';

const KEYS = { acme: 'key-of-acme', globex: 'key-of-globex', ops: 'key-of-ops' } as const;
const ENV = {
  AGENTLOOP_API_KEYS: `${KEYS.acme}:acme,${KEYS.globex}:globex`,
  AGENTLOOP_ADMIN_KEYS: `${KEYS.ops}:ops`,
  ALLOW_SCRIPTED_MODEL: 'true',
  TENANT_TOKEN_BUDGETS_DAILY: 'acme=1000',
  TOOL_CALL_TIMEOUT_MS: '10000',
};

/** Each turn reports 400 input + 100 output tokens: the budget is used up after two calls. */
const turn = (t: Record<string, unknown>) => ({ ...t, usage: { input_tokens: 400, output_tokens: 100 } });
const THREE_TURNS = [
  turn({ tool_calls: [{ name: 'todo_read', args: {} }] }),
  turn({ tool_calls: [{ name: 'todo_read', args: {} }] }),
  turn({ content: 'All done.' }),
];
const config = (extra: Record<string, unknown> = {}) => ({ configurable: { model: { provider: 'scripted', turns: THREE_TURNS }, ...extra } });

interface Budget {
  limit: number;
  used: number;
  resets_at: string;
}
interface Usage {
  tenant_id: string;
  from: string;
  to: string;
  totals: { input_tokens: number; output_tokens: number; total_tokens: number; model_calls: number; runs: number };
  by_model: Array<{ model: string; total_tokens: number; model_calls: number }>;
  by_day?: Array<{ day: string; total_tokens: number }>;
  budget: { daily: Budget | null; monthly: Budget | null };
}

const nextUtcMidnight = () => {
  const n = new Date();
  return new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth(), n.getUTCDate() + 1)).toISOString();
};

function budgetSuite(url: () => string) {
  const call = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${url()}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const json = async <T>(res: Response): Promise<T> => {
    const text = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };

  /** Runs the script on a new thread of the tenant and waits for the run's end. */
  async function runToEnd(key: string, cfg: Record<string, unknown>) {
    const { thread_id } = await json<{ thread_id: string }>(await call(key, 'POST', '/threads', {}));
    const run = await json<{ run_id: string }>(
      await call(key, 'POST', `/threads/${thread_id}/runs`, { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'work' }] }, config: cfg }),
    );
    const ended = await poll(async () => {
      const r = await json<{ status: string }>(await call(key, 'GET', `/threads/${thread_id}/runs/${run.run_id}`));
      return r.status === 'pending' || r.status === 'running' ? undefined : r;
    });
    const state = await json<{
      values: { messages: Array<{ type: string; content: unknown; response_metadata?: Record<string, unknown> }>; finalize_reason?: string };
    }>(await call(key, 'GET', `/threads/${thread_id}/state`));
    // The run's event log, replayed: its `error` event carries the error code.
    const events = await (await call(key, 'GET', `/threads/${thread_id}/runs/${run.run_id}/stream`)).text();
    return { status: ended.status, values: state.values, events };
  }

  it("ends acme's run at the call its daily budget refuses, with the budget status and message; globex's identical run succeeds", async () => {
    const acme = await runToEnd(KEYS.acme, config());
    expect(acme.status).toBe('error');
    const last = acme.values.messages.at(-1)!;
    expect(last.type).toBe('ai');
    expect(last.content).toBe(`Tenant acme has used its daily token budget: 1000 of 1000 tokens. It resets at ${nextUtcMidnight()}.`);
    expect(last.response_metadata?.agentloop_budget).toEqual({ budget: 'daily', limit: 1000, used: 1000, resets_at: nextUtcMidnight() });
    // Two model calls made (two tool results), the third refused: no "All done." answer.
    expect(acme.values.messages.filter((m) => m.type === 'tool')).toHaveLength(2);
    expect(acme.values.messages.some((m) => m.content === 'All done.')).toBe(false);
    expect(acme.values.finalize_reason).toBe('token_budget');
    expect(acme.events).toContain('"error":"token_budget_exceeded","message":"Tenant acme has used its daily token budget');

    const globex = await runToEnd(KEYS.globex, config());
    expect(globex.status).toBe('success');
    expect(globex.values.messages.at(-1)?.content).toBe('All done.');
  });

  it("refuses acme's next submission with 429, Retry-After to the next UTC midnight and the budget in the body; globex is still admitted", async () => {
    const { thread_id } = await json<{ thread_id: string }>(await call(KEYS.acme, 'POST', '/threads', {}));
    const before = Date.now();
    const refused = await call(KEYS.acme, 'POST', `/threads/${thread_id}/runs`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'again' }] },
      config: config(),
    });
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'token_budget_exceeded', budget: 'daily', limit: 1000, used: 1000, resets_at: nextUtcMidnight() });
    expect(String(body.detail)).toContain('daily token budget');
    const retryAfter = Number(refused.headers.get('retry-after'));
    const expected = (Date.parse(nextUtcMidnight()) - before) / 1000;
    expect(retryAfter).toBeGreaterThan(expected - 60);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(expected));
    // Stateless and batch submissions are refused the same way.
    const payload = { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'again' }] }, config: config() };
    expect((await call(KEYS.acme, 'POST', '/runs/wait', payload)).status).toBe(429);
    expect((await call(KEYS.acme, 'POST', '/runs/batch', [payload])).status).toBe(429);

    const { thread_id: other } = await json<{ thread_id: string }>(await call(KEYS.globex, 'POST', '/threads', {}));
    const admitted = await call(KEYS.globex, 'POST', `/threads/${other}/runs/wait`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'hi' }] },
      config: { configurable: { model: { provider: 'scripted', turns: [turn({ content: 'Hello.' })] } } },
    });
    expect(admitted.status).toBe(200);
  });

  it("ends a run at its own max_tokens_total, whatever the tenant's budget", async () => {
    const r = await runToEnd(KEYS.globex, config({ max_tokens_total: 500 }));
    expect(r.status).toBe('error');
    expect(r.values.messages.at(-1)?.content).toBe('This run has used its token budget: 500 of 500 tokens (config.configurable.max_tokens_total).');
    expect(r.values.messages.filter((m) => m.type === 'tool')).toHaveLength(1);
    expect(r.events).toContain('"error":"token_budget_exceeded"');
  });

  it('GET /usage: each tenant its own totals and budget, the operator every tenant; a tenant cannot read another', async () => {
    const acme = await json<Usage>(await call(KEYS.acme, 'GET', '/usage?group_by=day'));
    expect(acme.tenant_id).toBe('acme');
    expect(acme.totals).toEqual({ input_tokens: 800, output_tokens: 200, total_tokens: 1000, model_calls: 2, runs: 1 });
    expect(acme.by_model).toEqual([{ model: 'scripted', input_tokens: 800, output_tokens: 200, total_tokens: 1000, model_calls: 2 }]);
    expect(acme.by_day).toEqual([{ day: new Date().toISOString().slice(0, 10), input_tokens: 800, output_tokens: 200, total_tokens: 1000, model_calls: 2 }]);
    expect(acme.budget).toEqual({ daily: { limit: 1000, used: 1000, resets_at: nextUtcMidnight() }, monthly: null });

    // globex: 3 calls, then 1 (runs/wait), then 1 (max_tokens_total) — 500 tokens each, 3 runs.
    const globex = await json<Usage>(await call(KEYS.globex, 'GET', '/usage'));
    expect(globex.totals).toEqual({ input_tokens: 2000, output_tokens: 500, total_tokens: 2500, model_calls: 5, runs: 3 });
    expect(globex.by_day).toBeUndefined();
    expect(globex.budget).toEqual({ daily: null, monthly: null });

    const denied = await call(KEYS.acme, 'GET', '/usage?tenant_id=globex');
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { detail: string }).detail).toContain('query.tenant_id');
    expect((await call(KEYS.acme, 'GET', '/usage?from=2026-13-01')).status).toBe(422);

    const all = await json<{ tenants: Usage[] }>(await call(KEYS.ops, 'GET', '/usage'));
    expect(Object.fromEntries(all.tenants.map((t) => [t.tenant_id, t.totals.total_tokens]))).toEqual({ acme: 1000, globex: 2500 });
    const one = await json<Usage>(await call(KEYS.ops, 'GET', '/usage?tenant_id=acme'));
    expect(one.totals.total_tokens).toBe(1000);
  });
}

describe('token budgets and usage (embedded)', () => {
  const server = useEmbeddedServer('agentloop-budgets-', ENV);
  budgetSuite(() => server.url);
});

describe('token budgets and usage (cluster: MySQL ledger, separate gateway and orchestrator)', () => {
  const cluster = useCluster({ env: ENV });
  budgetSuite(() => cluster().url);
});
