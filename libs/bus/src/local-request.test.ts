import { silentLogger } from '@agentloop/core';
import { ExecuteToolRequestSchema, ExecuteToolResponseSchema, ToolRunner, create, fromBinary, toBinary } from '@agentloop/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { canRequestLocal } from './local-request.js';
import './services.js';
import { MemoryBus } from './memory-bus.js';
import { serveService, serviceClient } from './service-rpc.js';
import type { Bus } from './types.js';

const logger = silentLogger();
const buses: Bus[] = [];
afterEach(async () => {
  await Promise.allSettled(buses.splice(0).map((b) => b.close()));
});
const pair = () => {
  const server = new MemoryBus();
  const client = server.peer();
  buses.push(server, client);
  return { server, client };
};

/** The same bus without requestLocal: every call goes as bytes, as over NATS. */
const bytesOnly = (bus: MemoryBus): Bus => ({
  request: (s, d, o) => bus.request(s, d, o),
  serve: (s, o, h) => bus.serve(s, o, h),
  publish: (s, d, h) => bus.publish(s, d, h),
  subscribe: (s, h) => bus.subscribe(s, h),
  close: () => bus.close(),
});

/** A tool-runner whose listTools answers one cached list and records what each call asked for. */
async function serveTools(server: Bus) {
  const cached = [{ name: 'now', description: 'the time' }];
  const asked: string[][] = [];
  await serveService(
    server,
    ToolRunner,
    {
      listTools: async (req) => {
        asked.push(req.mentioned);
        // Later than the caller's next turn: the caller has had every chance to change its arguments.
        await new Promise((r) => setTimeout(r, 5));
        req.mentioned.push('handler-was-here');
        return { tools: cached, notFound: req.mentioned };
      },
      executeTool: (req) => ({ content: 7 as unknown as string, durationMs: BigInt(req.argsJson.length), idempotent: req.toolName === 'now' }),
      workspace: () => ({}),
      reloadTools: () => ({}),
    },
    { logger },
  );
  return { cached, asked };
}

describe('service calls handed over in-process as messages', () => {
  it('are what a MemoryBus does, and a bus without requestLocal sends bytes', () => {
    const { client } = pair();
    expect(canRequestLocal(client)).toBe(true);
    expect(canRequestLocal(bytesOnly(client))).toBe(false);
  });

  it('share no memory: the request is copied when sent, the reply when answered', async () => {
    const { server, client } = pair();
    const { cached, asked } = await serveTools(server);
    const mentioned = ['pdf'];
    const call = serviceClient(client, ToolRunner).listTools({ tenantId: 't', mentioned });
    mentioned.push('changed-after-the-call');
    const res = await call;
    expect(asked).toEqual([['pdf', 'handler-was-here']]);
    expect(mentioned).toEqual(['pdf', 'changed-after-the-call']);
    expect(res.notFound).toEqual(['pdf', 'handler-was-here']);
    res.tools[0]!.name = 'changed-by-the-caller';
    res.tools.push(res.tools[0]!);
    expect(cached).toEqual([{ name: 'now', description: 'the time' }]);
  });

  it('answer what the same call over bytes answers, values of the wrong type converted alike', async () => {
    const { server, client } = pair();
    await serveTools(server);
    const request = { tenantId: 't', toolName: 'now', argsJson: '{"a":1}' };
    const local = await serviceClient(client, ToolRunner).executeTool(request);
    const wire = await serviceClient(bytesOnly(client), ToolRunner).executeTool(request);
    expect(local).toEqual(wire);
    expect(local).toMatchObject({ content: '7', durationMs: 7n, idempotent: true });
  });

  it('reach a handler that takes only bytes, its reply decoded', async () => {
    const { server, client } = pair();
    await server.serve('agentloop.tools.execute', { queue: 'raw' }, async (msg) => {
      const req = fromBinary(ExecuteToolRequestSchema, msg.data);
      return toBinary(ExecuteToolResponseSchema, create(ExecuteToolResponseSchema, { content: `raw ${req.toolName} for ${msg.headers['agentloop-tenant']}` }));
    });
    const res = await serviceClient(client, ToolRunner).executeTool({ tenantId: 'acme', toolName: 'now' });
    expect(res.content).toBe('raw now for acme');
  });
});
