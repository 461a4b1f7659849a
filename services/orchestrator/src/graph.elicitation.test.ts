/**
 * MCP elicitation as a run interrupt (graph/elicitation.ts, graph/nodes/elicit.ts): a call that
 * comes back needing the user's input interrupts the run with `mcp_elicitation`; the resume value
 * is validated and the same call runs again with it, its sibling calls not again; a delegated
 * agent's call gets an error instead.
 */
import { describe, expect, it } from 'vitest';
import { Command, MemorySaver } from '@langchain/langgraph';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { buildAgentGraph, MCP_ELICITATION_INTERRUPT, type RunContext } from './graph.js';
import { ScriptedChatModel } from './models/scripted.js';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';
import { humanInterrupts } from './run-executor.js';

const SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const spec = (name: string, idempotent: boolean) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, { idempotent }) });

async function start(opts: { parentContext?: string } = {}) {
  const executed: ToolCallInput[] = [];
  const tools = {
    listTools: async () => [spec('shop_book', true), spec('write_file', false)],
    isIdempotent: (name: string) => name === 'shop_book',
    async execute(call: ToolCallInput): Promise<ToolCallResult> {
      executed.push(call);
      if (call.name !== 'shop_book') return { content: `ran ${call.name}`, isError: false };
      if (!call.elicitationAnswerJson) {
        return { content: '', isError: false, elicitation: { server: 'shop', message: 'Who is it for?', mode: 'form', requestedSchema: SCHEMA, url: null } };
      }
      return { content: `booked with ${call.elicitationAnswerJson}`, isError: false };
    },
  };
  const model = new ScriptedChatModel([
    {
      tool_calls: [
        { name: 'write_file', args: { file_path: 'outputs/a.txt', content: 'x' }, id: 'call-write' },
        { name: 'shop_book', args: {}, id: 'call-book' },
      ],
    },
    { content: 'done' },
  ]);
  const ctx: RunContext = {
    runId: 'r1',
    tenantId: 't1',
    threadId: 'th1',
    model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
    logger: silentLogger(),
    signal: new AbortController().signal,
  };
  const graph = buildAgentGraph({ tools, checkpointer: new MemorySaver(), runContext: () => ctx });
  const config = { configurable: { thread_id: 't1:th1', run_id: 'r1' }, recursionLimit: 200 };
  await graph.invoke({ messages: [new HumanMessage('go')], loops: 0, max_loops: 20, parent_context: opts.parentContext ?? null }, config);
  const pending = async () => humanInterrupts(await graph.getState(config)).map((i) => i.value as Record<string, unknown>);
  const resume = async (value: unknown) => void (await graph.invoke(new Command({ resume: value }), config));
  const toolMessages = async () =>
    ((await graph.getState(config)).values.messages as BaseMessage[])
      .filter((m) => ToolMessage.isInstance(m))
      .map((m) => [(m as ToolMessage).tool_call_id, m.content, (m as ToolMessage).status]);
  const state = async () => (await graph.getState(config)).values as Record<string, unknown>;
  return { executed, pending, resume, toolMessages, state };
}

describe('MCP elicitation as an interrupt', () => {
  it("interrupts with the server's request; the sibling call has run and has its result, the elicited one none yet", async () => {
    const r = await start();
    expect(await r.pending()).toEqual([
      {
        type: MCP_ELICITATION_INTERRUPT,
        tool_call_id: 'call-book',
        tool: 'shop_book',
        server: 'shop',
        message: 'Who is it for?',
        mode: 'form',
        requested_schema: SCHEMA,
        url: null,
      },
    ]);
    expect(r.executed.map((c) => c.name)).toEqual(['write_file', 'shop_book']);
    expect(await r.toolMessages()).toEqual([['call-write', 'ran write_file', 'success']]);
  });

  it('runs the same call again with the answer on resume, and not its sibling', async () => {
    const r = await start();
    await r.resume({ action: 'accept', content: { name: 'Ada' } });
    expect(await r.pending()).toEqual([]);
    expect(r.executed.map((c) => [c.name, c.toolCallId, c.elicitationAnswerJson ?? null])).toEqual([
      ['write_file', 'call-write', null],
      ['shop_book', 'call-book', null],
      ['shop_book', 'call-book', '{"action":"accept","content":{"name":"Ada"}}'],
    ]);
    expect(await r.toolMessages()).toEqual([
      ['call-write', 'ran write_file', 'success'],
      ['call-book', 'booked with {"action":"accept","content":{"name":"Ada"}}', 'success'],
    ]);
    expect((await r.state()).elicitations).toEqual({});
  });

  it('asks again, naming the field, when the resume value is not an answer; a decline reaches the retried call', async () => {
    const r = await start();
    await r.resume({ action: 'maybe' });
    const [again] = await r.pending();
    expect(again).toMatchObject({ type: MCP_ELICITATION_INTERRUPT, tool_call_id: 'call-book' });
    expect(again!.error).toMatch(/^Invalid answer to the MCP server's request: action: /);
    await r.resume({ action: 'decline', content: { name: 'x' } });
    expect((await r.pending())[0]!.error).toContain('content is given only with action "accept"');
    await r.resume('decline');
    expect(await r.pending()).toEqual([]);
    expect(r.executed.at(-1)).toMatchObject({ name: 'shop_book', elicitationAnswerJson: '{"action":"decline"}' });
  });

  it("gives a delegated agent's call an error to report instead of interrupting", async () => {
    const r = await start({ parentContext: 'parent-ctx' });
    expect(await r.pending()).toEqual([]);
    const messages = await r.toolMessages();
    expect(messages).toContainEqual([
      'call-book',
      expect.stringContaining('shop_book needs the user\'s input (MCP server shop asked: "Who is it for?")'),
      'error',
    ]);
  });
});
