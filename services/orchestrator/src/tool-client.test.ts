import { describe, expect, it } from 'vitest';
import { MemoryBus } from '@agentloop/bus';
import {
  create,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  fromBinary,
  ListToolsResponseSchema,
  ToolMetadataSchema,
  ToolSpecSchema,
  toBinary,
} from '@agentloop/proto';
import { MCP_PROVIDER, SKILLS_PROVIDER, TOOL_RUNNER_PROVIDER, ToolClient } from './tool-client.js';

const spec = (name: string) => create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{}', metadata: create(ToolMetadataSchema, {}) });
const call = (name: string) => ({ tenantId: 't', threadId: 'th', runId: 'r', toolCallId: `c-${name}`, name, args: {} });

async function provider(bus: MemoryBus, listSubject: string, executeSubject: string, names: string[], tag: string) {
  await bus.serve(listSubject, { queue: tag }, async () => toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: names.map(spec) })));
  await bus.serve(executeSubject, { queue: tag }, async (msg) => {
    const req = fromBinary(ExecuteToolRequestSchema, msg.data);
    return toBinary(ExecuteToolResponseSchema, create(ExecuteToolResponseSchema, { content: `${tag} ran ${req.toolName}` }));
  });
}

describe('ToolClient with several providers', () => {
  it('merges the lists (first provider wins a name) and sends each call to the provider that offered it', async () => {
    const bus = new MemoryBus();
    await provider(bus, 'agentloop.tools.list', 'agentloop.tools.execute', ['read_file', 'skill'], 'runner');
    await provider(bus, 'agentloop.skills.tools.list', 'agentloop.skills.tools.execute', ['skill', 'run_skill_script'], 'skills');
    const client = new ToolClient(bus, { callTimeoutMs: 1000, providers: [TOOL_RUNNER_PROVIDER, SKILLS_PROVIDER] });
    expect((await client.listTools('t')).map((t) => t.name)).toEqual(['read_file', 'skill', 'run_skill_script']);
    expect((await client.execute(call('read_file'))).content).toBe('runner ran read_file');
    expect((await client.execute(call('skill'))).content).toBe('runner ran skill');
    expect((await client.execute(call('run_skill_script'))).content).toBe('skills ran run_skill_script');
    // A provider without a replay log is never asked for a recorded outcome (it would run the call).
    expect(await client.recordedOutcome(call('run_skill_script'))).toBeUndefined();
    await bus.close();
  });

  it('an optional provider that is absent only removes its tools; the required one failing is an error', async () => {
    const bus = new MemoryBus();
    await provider(bus, 'agentloop.tools.list', 'agentloop.tools.execute', ['read_file'], 'runner');
    const client = new ToolClient(bus, { callTimeoutMs: 1000, listTimeoutMs: 200, providers: [TOOL_RUNNER_PROVIDER, SKILLS_PROVIDER] });
    expect((await client.listTools('t')).map((t) => t.name)).toEqual(['read_file']);
    const alone = new MemoryBus();
    await provider(alone, 'agentloop.skills.tools.list', 'agentloop.skills.tools.execute', ['skill'], 'skills');
    await expect(
      new ToolClient(alone, { callTimeoutMs: 1000, listTimeoutMs: 200, providers: [TOOL_RUNNER_PROVIDER, SKILLS_PROVIDER] }).listTools('t'),
    ).rejects.toThrow();
    await bus.close();
    await alone.close();
  });

  it('a name no listing offered, unknown to the first provider, is answered by the provider that knows it', async () => {
    const bus = new MemoryBus();
    const answer = (executeSubject: string, reply: (name: string) => { content: string; error?: { code: string; message: string } }) =>
      bus.serve(executeSubject, { queue: executeSubject }, async (msg) => {
        const req = fromBinary(ExecuteToolRequestSchema, msg.data);
        return toBinary(ExecuteToolResponseSchema, create(ExecuteToolResponseSchema, reply(req.toolName)));
      });
    const unknown = (name: string) => ({ content: `Error: Unknown tool: ${name}`, error: { code: 'NOT_FOUND', message: `Unknown tool: ${name}` } });
    await answer('agentloop.tools.execute', unknown);
    await answer('agentloop.skills.tools.execute', unknown);
    await answer('agentloop.mcp.tools.execute', (name) =>
      name === 'off_echo'
        ? {
            content: 'Error: Tool off_echo is disabled in the MCP configuration',
            error: { code: 'NOT_FOUND', message: 'Tool off_echo is disabled in the MCP configuration' },
          }
        : unknown(name),
    );
    const client = new ToolClient(bus, { callTimeoutMs: 1000, providers: [TOOL_RUNNER_PROVIDER, SKILLS_PROVIDER, MCP_PROVIDER] });
    expect(await client.execute(call('off_echo'))).toEqual({
      content: 'Error: Tool off_echo is disabled in the MCP configuration',
      isError: true,
      errorCode: 'NOT_FOUND',
    });
    // Nobody knows it: the first provider's answer.
    expect((await client.execute(call('nothing'))).content).toBe('Error: Unknown tool: nothing');
    await bus.close();
  });
});
