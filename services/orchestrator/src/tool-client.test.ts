import { describe, expect, it } from 'vitest';
import { MemoryBus } from '@agentloop/bus';
import {
  create,
  fromBinary,
  toBinary,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  ToolSpecSchema,
  type ExecuteToolRequest,
  type ListToolsRequest,
} from '@agentloop/proto';
import { ToolClient, TOOL_SUBJECTS } from './tool-client.js';

/** A tool-runner stand-in on the in-memory bus that records the requests it receives. */
async function peer() {
  const bus = new MemoryBus();
  const lists: ListToolsRequest[] = [];
  const executes: ExecuteToolRequest[] = [];
  await bus.serve(TOOL_SUBJECTS.list, { queue: 'tool-runner' }, async (msg) => {
    lists.push(fromBinary(ListToolsRequestSchema, msg.data));
    return toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: [create(ToolSpecSchema, { name: 'echo' })] }));
  });
  await bus.serve(TOOL_SUBJECTS.execute, { queue: 'tool-runner' }, async (msg) => {
    executes.push(fromBinary(ExecuteToolRequestSchema, msg.data));
    return toBinary(ExecuteToolResponseSchema, create(ExecuteToolResponseSchema, { content: 'ok' }));
  });
  return { client: new ToolClient(bus.peer(), { callTimeoutMs: 5_000 }), lists, executes };
}

describe('ToolClient', () => {
  it('asks for the visible tool set with the allowed, mentioned and sub-agent fields', async () => {
    const p = await peer();
    const tools = await p.client.listTools('t1', { mentioned: ['web', 'echo', 'web'], allowed: ['b', 'a'], subagent: true });
    expect(tools.map((t) => t.name)).toEqual(['echo']);
    expect(p.lists[0]).toMatchObject({ tenantId: 't1', mentioned: ['echo', 'web'], allowed: ['a', 'b'], subagent: true, visible: true });
  });

  it('caches the list per visibility, not across different mentions', async () => {
    const p = await peer();
    await p.client.listTools('t1', { mentioned: ['a'] });
    await p.client.listTools('t1', { mentioned: ['a'] });
    await p.client.listTools('t1', { mentioned: ['b'] });
    expect(p.lists.map((r) => r.mentioned)).toEqual([['a'], ['b']]);
  });

  it('marks a call of a mentioned tool as on demand and passes the sub-agent flag', async () => {
    const p = await peer();
    const res = await p.client.execute({ tenantId: 't1', threadId: 'th', runId: 'r', toolCallId: 'c1', name: 'web', args: { q: 1 }, onDemand: true, subagent: true });
    expect(res).toEqual({ content: 'ok', isError: false });
    expect(p.executes[0]).toMatchObject({ toolName: 'web', argsJson: '{"q":1}', onDemand: true, subagent: true });
  });
});
