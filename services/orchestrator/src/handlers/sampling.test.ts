import { FakeListChatModel } from '@langchain/core/utils/testing';
import type { BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { Headers, decodeSamplingReply, encodeSamplingRequest, type SamplingRequest } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import type { RunRecord } from '@agentloop/store';
import type { ModelSlot, ResolvedModel } from '../models/registry.js';
import { samplingHandler } from './sampling.js';

const RUN = 'run-1';

function setup(status: RunRecord['status'] = 'running', budgetStop: string | null = null) {
  const recorded: unknown[][] = [];
  const tokens = {
    forRun: (tenantId: string) => ({
      check: () => Promise.resolve(budgetStop ? { budget: 'daily' as const, limit: 1, used: 1, resets_at: null, message: `${tenantId}: ${budgetStop}` } : null),
      record: (...args: unknown[]) => {
        recorded.push([tenantId, ...args]);
        return Promise.resolve();
      },
    }),
  };
  const asked: Array<{ slot: ModelSlot; maxTokens: number; messages: BaseMessage[] }> = [];
  const runs = new Map([[`t1:${RUN}`, { runId: RUN, tenantId: 't1', status } as RunRecord]]);
  const handler = samplingHandler({
    store: { getRun: (tenantId: string, runId: string) => Promise.resolve(runs.get(`${tenantId}:${runId}`)) },
    models: {
      oneOff: (slot, opts): ResolvedModel => {
        const model = new FakeListChatModel({ responses: ['a short answer'] });
        const invoke = model.invoke.bind(model);
        model.invoke = ((input: BaseMessage[], o?: unknown) => {
          asked.push({ slot, maxTokens: opts.maxTokens, messages: input });
          return invoke(input, o as never);
        }) as typeof model.invoke;
        return { model, label: slot, provider: 'openai-compatible', modelId: `model-${slot}` };
      },
    },
    tokens,
    logger: silentLogger(),
  });
  const ask = async (tenant: string | undefined, req: Partial<SamplingRequest>) => {
    const body: SamplingRequest = {
      run_id: RUN,
      tool_call_id: 'c1',
      server: 'everything',
      slot: 'base',
      hints: [],
      messages: [{ role: 'user', text: 'hi' }],
      max_tokens: 50,
      ...req,
    };
    const reply = await handler(
      { subject: 's', data: encodeSamplingRequest(body), headers: tenant ? { [Headers.tenant]: tenant } : {} },
      { signal: new AbortController().signal, deadline: undefined },
    );
    return decodeSamplingReply(reply);
  };
  return { ask, asked, recorded };
}

describe('MCP sampling handler', () => {
  it("answers on the server's slot, or the slot a model hint names, with the system prompt and the token cap", async () => {
    const { ask, asked } = setup();
    const reply = await ask('t1', {
      system_prompt: 'Be brief.',
      messages: [
        { role: 'user', text: 'hi' },
        { role: 'assistant', text: 'yes?' },
        { role: 'user', text: 'more' },
      ],
    });
    expect(reply).toMatchObject({ model: 'model-base', text: 'a short answer', stop_reason: 'endTurn' });
    expect(asked[0]!.slot).toBe('base');
    expect(asked[0]!.maxTokens).toBe(50);
    expect(asked[0]!.messages.map((m) => [m.getType(), m.content])).toEqual([
      ['system', 'Be brief.'],
      ['human', 'hi'],
      ['ai', 'yes?'],
      ['human', 'more'],
    ]);
    await ask('t1', { hints: ['claude-3-sonnet', 'reasoning'] });
    expect(asked[1]!.slot).toBe('reasoning');
  });

  it("counts the completion in the tenant's usage ledger, and refuses it when the tenant's budget is spent", async () => {
    const ok = setup();
    await ok.ask('t1', {});
    expect(ok.recorded).toEqual([['t1', 'model-base', { input_tokens: 0, output_tokens: 0, total_tokens: 0 }, false]]);
    const spent = setup('running', 'daily budget used');
    await expect(spent.ask('t1', {})).rejects.toThrow(/t1: daily budget used/);
    expect(spent.asked).toEqual([]);
  });

  it("refuses another tenant's run (not found), a run that is not running, and a request without a tenant", async () => {
    await expect(setup().ask('t2', {})).rejects.toThrow(/Run run-1 not found/);
    await expect(setup('success').ask('t1', {})).rejects.toThrow(/Run run-1 is success, not running/);
    await expect(setup().ask(undefined, {})).rejects.toThrow(/agentloop-tenant header/);
  });

  it('names the invalid field of a malformed request', async () => {
    await expect(setup().ask('t1', { messages: [] })).rejects.toThrow(/Invalid sampling request: messages:/);
    await expect(setup().ask('t1', { slot: 'fast' })).rejects.toThrow(/Invalid sampling request: slot:/);
  });
});
