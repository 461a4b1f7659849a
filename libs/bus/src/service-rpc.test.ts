import { AgentLoopError, TimeoutError, silentLogger } from '@agentloop/core';
import { Indexer, ToolRunner, ListToolsRequestSchema, toBinary, create, WorkspaceRequest_Action } from '@agentloop/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteError } from './errors.js';
import { MemoryBus } from './memory-bus.js';
import { defineService, rpcHandler, serveService, serviceClient, subjectsOf, TENANT_MISMATCH_MESSAGE, type ServiceShape } from './service-rpc.js';
import { INDEXER_RPC, SKILL_TOOLS_RPC, TOOL_RUNNER_RPC } from './services.js';
import { Headers, type Bus } from './types.js';

const logger = silentLogger();
const buses: Bus[] = [];
const pair = () => {
  const server = new MemoryBus();
  const client = server.peer();
  buses.push(server, client);
  return { server, client };
};
afterEach(async () => {
  await Promise.allSettled(buses.splice(0).map((b) => b.close()));
});

/** A tool-runner whose handlers echo what they saw; `fail` decides how `executeTool` fails. */
async function toolRunner(server: Bus, fail?: () => never) {
  const seen: Array<{ tenant: string; deadline: number | undefined }> = [];
  await serveService(
    server,
    ToolRunner,
    {
      listTools: (req, ctx) => {
        seen.push({ tenant: ctx.tenantId, deadline: ctx.deadline });
        return { tools: [{ name: `tool-of-${req.tenantId}` }], notFound: req.mentioned };
      },
      executeTool: (req) => {
        fail?.();
        return { content: `ran ${req.toolName}`, durationMs: 3n };
      },
      workspace: () => {
        throw new Error('disk on fire at /var/lib/agentloop/secret');
      },
      reloadTools: () => {
        throw new Error('boom: /etc/shadow');
      },
    },
    { logger },
  );
  return seen;
}

describe('service bindings', () => {
  it('keep the subjects on the wire since the first release', () => {
    expect(subjectsOf(TOOL_RUNNER_RPC)).toEqual({
      listTools: 'agentloop.tools.list',
      executeTool: 'agentloop.tools.execute',
      workspace: 'agentloop.tools.workspace',
      reloadTools: 'agentloop.tools.reload',
    });
    expect(subjectsOf(SKILL_TOOLS_RPC)).toEqual({ listTools: 'agentloop.skills.tools.list', executeTool: 'agentloop.skills.tools.execute' });
    expect(subjectsOf(INDEXER_RPC)).toEqual({ readDocument: 'agentloop.indexer.read', searchDocument: 'agentloop.indexer.search' });
  });

  it('refuse an error field on a reply that has none, and an RPC the service does not have', () => {
    expect(() =>
      defineService<ServiceShape<typeof ToolRunner>, 'listTools'>(ToolRunner, {
        label: 'x',
        queue: 'x',
        prefix: 'x',
        methods: { listTools: { name: 'list', timeoutMs: 1, errors: 'field' } },
      }),
    ).toThrow(/ListToolsResponse has no error field/);
    expect(() =>
      defineService<ServiceShape<typeof Indexer>, 'readDocument'>(Indexer, {
        label: 'x',
        queue: 'x',
        prefix: 'x',
        methods: { readDocument: { name: 'read', timeoutMs: 1 }, ...({ nope: { name: 'n', timeoutMs: 1 } } as object) },
      }),
    ).toThrow('agentloop.v1.Indexer has no RPC nope');
  });
});

describe('serviceClient / serveService', () => {
  it('round-trips typed messages and sets the tenant header from the request', async () => {
    const { server, client } = pair();
    const seen = await toolRunner(server);
    const tools = serviceClient(client, ToolRunner);
    const res = await tools.listTools({ tenantId: 'acme', mentioned: ['pdf'] });
    expect(res.tools.map((t) => t.name)).toEqual(['tool-of-acme']);
    expect(res.notFound).toEqual(['pdf']);
    expect(seen[0]?.tenant).toBe('acme');
    const ran = await tools.executeTool({ tenantId: 'acme', toolName: 'now' });
    expect(ran).toMatchObject({ content: 'ran now', durationMs: 3n });
    expect(ran.error).toBeUndefined();
  });

  it('serves a tool provider binding on its own subjects', async () => {
    const { server, client } = pair();
    await serveService(server, SKILL_TOOLS_RPC, { listTools: () => ({ tools: [{ name: 'skill' }] }), executeTool: () => ({ content: 'ok' }) }, { logger });
    expect(
      (await server.request('agentloop.skills.tools.list', toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, {})), { timeoutMs: 1_000 })).data
        .length,
    ).toBeGreaterThan(0);
    expect((await serviceClient(client, SKILL_TOOLS_RPC).listTools({ tenantId: 't' })).tools[0]?.name).toBe('skill');
    await expect(serviceClient(client, ToolRunner).listTools({ tenantId: 't' })).rejects.toThrow('no service is serving agentloop.tools.list');
  });

  it('refuses a request whose body names another tenant than its caller, on both error channels', async () => {
    const { server, client } = pair();
    const seen = await toolRunner(server);
    const tools = serviceClient(client, ToolRunner);
    const listed = await tools.listTools({ tenantId: 'acme' }, { tenantId: 'globex' }).catch((e: unknown) => e);
    expect(listed).toBeInstanceOf(RemoteError);
    expect(listed).toMatchObject({ code: 'PERMISSION_DENIED', message: TENANT_MISMATCH_MESSAGE, retryable: false });
    expect(seen).toEqual([]);
    const executed = await tools.executeTool({ tenantId: 'acme', toolName: 'now' }, { headers: { [Headers.tenant]: 'globex' } });
    expect(executed.error).toMatchObject({ code: 'PERMISSION_DENIED', message: TENANT_MISMATCH_MESSAGE });
    expect(executed.content).toBe(`Error: ${TENANT_MISMATCH_MESSAGE}`);
    // The header alone names the tenant when the body does not.
    await tools.listTools({}, { tenantId: 'initech' });
    expect(seen.map((s) => s.tenant)).toEqual(['initech']);
  });

  it('sends an unknown error as INTERNAL with a generic message, and a coded one as it is', async () => {
    const { server, client } = pair();
    await toolRunner(server, () => {
      throw new AgentLoopError('NOT_FOUND', 'File not found: uploads/x.txt');
    });
    const tools = serviceClient(client, ToolRunner);
    const reload = await tools.reloadTools({}).catch((e: unknown) => e);
    expect(reload).toBeInstanceOf(RemoteError);
    expect(reload).toMatchObject({ code: 'INTERNAL', message: 'Internal error in the tool-runner (ToolRunner.ReloadTools)', retryable: false });
    expect((reload as Error).message).not.toContain('shadow');
    const ws = await tools.workspace({ tenantId: 'acme', threadId: 't', action: WorkspaceRequest_Action.ENSURE });
    expect(ws.error).toMatchObject({ code: 'INTERNAL', message: 'Internal error in the tool-runner (ToolRunner.Workspace)' });
    expect(JSON.stringify(ws.error)).not.toContain('/var/lib');
    const coded = await tools.executeTool({ tenantId: 'acme', toolName: 'read_file' });
    expect(coded.error).toMatchObject({ code: 'NOT_FOUND', message: 'File not found: uploads/x.txt', retryable: false });
    expect(coded.content).toBe('Error: File not found: uploads/x.txt');
  });

  it('answers bytes that are not the request message with INVALID_ARGUMENT', async () => {
    const { server, client } = pair();
    await toolRunner(server);
    const err = await client.request('agentloop.tools.list', new Uint8Array([0xff, 0xff]), { timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/^Invalid ListToolsRequest: /) });
  });

  it('uses the method deadline unless the caller gives one, and aborts the handler when it passes', async () => {
    const { server, client } = pair();
    let aborted: unknown;
    const deadlines: number[] = [];
    await serveService(
      server,
      INDEXER_RPC,
      {
        readDocument: (_req, ctx) => {
          deadlines.push(ctx.deadline ?? 0);
          return { content: 'x' };
        },
        searchDocument: (_req, ctx) =>
          new Promise((resolve) => {
            ctx.signal.addEventListener('abort', () => {
              aborted = ctx.signal.reason;
              resolve({ content: 'late' });
            });
          }),
      },
      { logger },
    );
    const indexer = serviceClient(client, Indexer);
    const before = Date.now();
    await indexer.readDocument({ tenantId: 'a' });
    expect(deadlines[0]).toBeGreaterThanOrEqual(before + INDEXER_RPC.methods.readDocument.timeoutMs);
    await indexer.readDocument({ tenantId: 'a' }, { timeoutMs: 2_000 });
    expect(deadlines[1]).toBeLessThanOrEqual(Date.now() + 2_000);
    await expect(indexer.searchDocument({ tenantId: 'a', query: 'q' }, { timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    await expect.poll(() => aborted).toBeInstanceOf(TimeoutError);
  });

  it('builds a handler callable without a bus', async () => {
    const handler = rpcHandler(ToolRunner, 'listTools', (req) => ({ notFound: [req.tenantId] }), { logger });
    const reply = await handler(
      { subject: 'agentloop.tools.list', data: toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'acme' })), headers: {} },
      { signal: new AbortController().signal, deadline: undefined },
    );
    expect(reply.length).toBeGreaterThan(0);
  });

  it('stops every RPC with the returned subscription', async () => {
    const { server, client } = pair();
    const sub = await serveService(server, INDEXER_RPC, { readDocument: () => ({}), searchDocument: () => ({}) }, { logger });
    await sub.unsubscribe();
    await expect(serviceClient(client, Indexer).readDocument({})).rejects.toThrow('no service is serving agentloop.indexer.read');
  });
});
