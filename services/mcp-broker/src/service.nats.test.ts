import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Headers, connectNatsBus, type NatsBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { startNats, type DevServer } from '@agentloop/devservers';
import {
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  create,
  fromBinary,
  toBinary,
} from '@agentloop/proto';
import { loadMcpBrokerConfig, parseMcpFile } from './config.js';
import { MCP_SUBJECTS, createMcpBroker, type McpBroker } from './service.js';
import { ECHO_SERVER_SCRIPT, serverCommand, startHttpEchoServer, type HttpMcpServer } from './testing/index.js';

// The broker on a real nats-server, with a stdio server and a streamable HTTP server behind it.
describe('mcp-broker on NATS', () => {
  let nats: DevServer;
  let remote: HttpMcpServer;
  let brokerBus: NatsBus;
  let client: NatsBus;
  let broker: McpBroker;

  beforeAll(async () => {
    nats = await startNats({ jetstream: false });
    remote = await startHttpEchoServer({ mode: 'http' });
    const local = serverCommand(ECHO_SERVER_SCRIPT);
    brokerBus = await connectNatsBus({ url: nats.url, name: 'mcp-broker' });
    broker = await createMcpBroker({
      bus: brokerBus,
      logger: silentLogger(),
      config: loadMcpBrokerConfig({}),
      env: { PATH: process.env.PATH },
      file: parseMcpFile(`
servers:
  local:
    command: ${JSON.stringify(local.command)}
    args: ${JSON.stringify(local.args)}
    tools: { echo: { always_available: true, alias: mcp_echo } }
  remote:
    connection_mode: http
    url: ${remote.url}
    tools: { add: { always_available: true } }
`),
    });
    await broker.start();
    client = await connectNatsBus({ url: nats.url, name: 'test-client' });
  });

  afterAll(async () => {
    await broker?.stop();
    for (const b of [brokerBus, client]) await b?.close();
    await remote?.close();
    await nats?.stop();
  });

  it('lists and calls tools of a stdio and a streamable HTTP server over NATS', async () => {
    const headers = { [Headers.tenant]: 'acme' };
    const listed = fromBinary(
      ListToolsResponseSchema,
      (
        await client.request(MCP_SUBJECTS.toolsList, toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'acme', visible: true })), {
          timeoutMs: 30_000,
          headers,
        })
      ).data,
    );
    expect(listed.tools.map((t) => t.name).sort()).toEqual(['mcp_echo', 'remote_add']);

    const exec = async (toolName: string, args: object) =>
      fromBinary(
        ExecuteToolResponseSchema,
        (
          await client.request(
            MCP_SUBJECTS.toolsExecute,
            toBinary(ExecuteToolRequestSchema, create(ExecuteToolRequestSchema, { tenantId: 'acme', toolName, argsJson: JSON.stringify(args) })),
            { timeoutMs: 30_000, headers },
          )
        ).data,
      );
    expect((await exec('mcp_echo', { text: 'over nats' })).content).toBe('over nats');
    const sum = await exec('remote_add', { a: 40, b: 2 });
    expect(sum.content).toBe('42');
    expect((await exec('remote_missing', {})).content).toBe('Error: Unknown tool: remote_missing');
  });
});
