/**
 * Token budgets through the graph (issue 17): every model call — agent turns and compaction
 * summaries — is written to the usage ledger, and a budget that refuses a call ends the run
 * with a message naming it and `finalize_reason: "token_budget"`, without calling the model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { parseConfig, silentLogger, TokenBudgetEnv } from '@agentloop/core';
import { createStore, TenantBudgets, type Store } from '@agentloop/store';
import { startTestTelemetry, type TestTelemetry } from '@agentloop/telemetry';
import { buildAgentGraph, type RunContext } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import { TokenAccounting } from './budgets/token-accounting.js';

const NOW = new Date('2026-03-10T12:00:00Z');
const used = (n: number) => ({ usage: { input_tokens: n, output_tokens: 0 } });

describe('token budgets in the agent graph', () => {
  let store: Store;
  let telemetry: TestTelemetry;
  beforeAll(async () => {
    store = createStore({ sqlitePath: ':memory:' });
    await store.migrate();
    telemetry = await startTestTelemetry('orchestrator');
  });
  afterAll(async () => {
    await store.close();
    await telemetry[Symbol.asyncDispose]();
  });

  function harness(tenantId: string, budgetEnv: Record<string, string> = {}) {
    const budgets = new TenantBudgets(store, parseConfig(TokenBudgetEnv, budgetEnv), { cacheMs: 0, now: () => NOW });
    const accounting = new TokenAccounting({ store, budgets, logger: silentLogger(), now: () => NOW });
    const contexts = new Map<string, RunContext>();
    const tools = { listTools: async () => [], execute: async () => ({ content: 'unused', isError: false }) };
    const graph = buildAgentGraph({ tools, checkpointer: new MemorySaver(), runContext: (id) => contexts.get(id) });
    async function run(runId: string, text: string, turns: ScriptedTurn[], maxTokensTotal: number | null = null) {
      const model = new ScriptedChatModel(turns);
      let calls = 0;
      const orig = model._generate.bind(model);
      model._generate = async (m, o) => (calls++, orig(m, o));
      contexts.set(runId, {
        runId,
        tenantId,
        threadId: 'th1',
        model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
        logger: silentLogger(),
        signal: new AbortController().signal,
        tokens: accounting.forRun(tenantId, maxTokensTotal),
      });
      const out = await graph.invoke(
        { messages: [new HumanMessage(text)], loops: 0, finalize_reason: null, context_id: runId },
        { configurable: { thread_id: `${tenantId}:th1`, run_id: runId }, recursionLimit: 100 },
      );
      return { out, calls: () => calls };
    }
    return { run, ledger: () => store.tokenUsageRows(tenantId, '2026-03-10', '2026-03-10') };
  }

  it('records agent turns and a /compact summary in the ledger, one row per model, runs counted once', async () => {
    const h = harness('t-ledger');
    await h.run('r1', 'hi', [
      { tool_calls: [{ name: 'todo_read', args: {} }], ...used(300) },
      { content: 'a1', ...used(300) },
    ]);
    await h.run('r2', '/compact', [{ content: 'SUMMARY', ...used(200) }]);
    expect(await h.ledger()).toEqual([
      { tenantId: 't-ledger', day: '2026-03-10', model: 'scripted', inputTokens: 800, outputTokens: 0, totalTokens: 800, modelCalls: 3, runs: 2 },
    ]);
  });

  it("stops at the run's max_tokens_total before the call that would exceed it, without calling the model", async () => {
    const h = harness('t-run');
    const turns = [0, 1, 2].map(() => ({ tool_calls: [{ name: 'todo_read', args: {} }], ...used(300) }));
    const { out, calls } = await h.run('r1', 'work', turns, 300);
    expect(calls()).toBe(1);
    const last = out.messages.at(-1)!;
    expect(AIMessage.isInstance(last) && last.content).toBe('This run has used its token budget: 300 of 300 tokens (config.configurable.max_tokens_total).');
    expect((last.response_metadata as Record<string, unknown>).agentloop_budget).toEqual({ budget: 'run', limit: 300, used: 300, resets_at: null });
    expect(out.finalize_reason).toBe('token_budget');
    expect(out.run_usage.total_tokens).toBe(300);
  });

  it("refuses a /compact summary when the tenant's daily budget is used up", async () => {
    const h = harness('t-day', { TENANT_TOKEN_BUDGETS_DAILY: 't-day=500' });
    await h.run('r1', 'hi', [{ content: 'a1', ...used(500) }]);
    const { out, calls } = await h.run('r2', '/compact', [{ content: 'SUMMARY', ...used(100) }]);
    expect(calls()).toBe(0);
    expect(out.messages.at(-1)!.content).toBe('Tenant t-day has used its daily token budget: 500 of 500 tokens. It resets at 2026-03-11T00:00:00.000Z.');
    expect(out.finalize_reason).toBe('token_budget');
    expect((await h.ledger()).map((r) => r.totalTokens)).toEqual([500]);
    await telemetry.collect();
    const remaining = telemetry.points('agentloop.tokens.budget_remaining').filter((p) => p.attributes['agentloop.tenant'] === 't-day');
    expect(remaining.map((p) => [p.attributes.budget, p.value])).toEqual([['daily', 0]]);
    const tokens = telemetry
      .points('agentloop.model.tokens')
      .filter((p) => p.attributes['agentloop.tenant'] === 't-day' && p.attributes['gen_ai.token.type'] === 'input');
    expect(tokens.map((p) => [p.attributes['gen_ai.request.model'], p.value])).toEqual([['scripted', 500]]);
  });
});
