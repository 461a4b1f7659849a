/**
 * MCP elicitation as a run interrupt end to end (issue 14), embedded and as a cluster (mcp-broker
 * and orchestrator over NATS), against server-everything's `trigger-elicitation-request` (its
 * form: a required `name` and fields with defaults), marked idempotent in mcp_servers.yaml so its
 * call may wait for the user: the run interrupts with `mcp_elicitation` (thread `interrupted`,
 * `__interrupt__` in the values and the updates stream); a resume with accept + content makes the
 * server receive the content, the schema's defaults filled in; a decline reaches the server as a
 * decline. docs/mcp-client-features.md "Elicitation".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, startCluster, useEmbeddedServer, type ClusterHarness } from './helpers.js';
import { writeEverythingConfig } from './mcp-everything.js';

type Msg = { type: string; content: string; name?: string };
type Values = { messages: Msg[]; __interrupt__?: Array<{ value: Record<string, unknown> }> };

/** mcp_servers.yaml in `dir`: server-everything over stdio, its elicitation tool offered as `fill_form` and marked idempotent. */
const elicitationConfig = (dir: string): string => writeEverythingConfig(dir, { 'trigger-elicitation-request': 'alias: fill_form, idempotent: true' });

const askForm = (id: string) => scripted([{ tool_calls: [{ name: 'fill_form', args: {}, id }] }]);

async function elicitationJourney(url: string): Promise<void> {
  const client = new Client({ apiUrl: url });

  // 1. The call needs the user's input: the run stops with the server's request.
  const thread = await client.threads.create();
  const first = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'fill in the form' }] },
    config: askForm('call-form-1'),
  })) as Values;
  expect(first.__interrupt__).toHaveLength(1);
  const request = first.__interrupt__![0]!.value;
  expect(request).toMatchObject({
    type: 'mcp_elicitation',
    tool_call_id: 'call-form-1',
    tool: 'fill_form',
    server: 'everything',
    message: 'Please provide inputs for the following fields:',
    mode: 'form',
    url: null,
  });
  expect(request.requested_schema).toMatchObject({ type: 'object', required: ['name'], properties: { integer: { type: 'integer', default: 42 } } });
  expect((await client.threads.get(thread.thread_id)).status).toBe('interrupted');
  expect((await client.threads.getState(thread.thread_id)).next).toEqual(['elicit']);
  expect(first.messages.filter((m) => m.type === 'tool')).toEqual([]);

  // 2. Accept with content: the same call runs again and the server receives it, defaults filled in.
  const accepted = (await client.runs.wait(thread.thread_id, 'agent', {
    command: { resume: { action: 'accept', content: { name: 'Ada Lovelace', check: true } } },
    config: scripted([{ content: 'Thanks, Ada.' }]),
  })) as Values;
  expect(accepted.__interrupt__).toBeUndefined();
  const result = accepted.messages.filter((m) => m.type === 'tool');
  expect(result).toHaveLength(1);
  expect(result[0]!.name).toBe('fill_form');
  expect(result[0]!.content).toContain('User provided the requested information!');
  expect(result[0]!.content).toContain('- Name: Ada Lovelace');
  expect(result[0]!.content).toContain('- Agreed to terms: true');
  expect(result[0]!.content).toContain('- Favorite Integer: 42');
  expect(accepted.messages.at(-1)!.content).toBe('Thanks, Ada.');
  expect((await client.threads.get(thread.thread_id)).status).toBe('idle');

  // 3. Decline, the interrupt seen in the updates stream: the server is told the user declined.
  const other = await client.threads.create();
  const updates: Array<Record<string, unknown>> = [];
  for await (const chunk of client.runs.stream(other.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'fill in the form' }] },
    config: askForm('call-form-2'),
    streamMode: ['updates'],
  })) {
    if (chunk.event === 'updates') updates.push(chunk.data as Record<string, unknown>);
  }
  const interrupt = updates.find((u) => '__interrupt__' in u)?.__interrupt__ as Array<{ value: Record<string, unknown> }> | undefined;
  expect(interrupt?.[0]?.value).toMatchObject({ type: 'mcp_elicitation', tool_call_id: 'call-form-2', tool: 'fill_form' });
  // A resume value that is no answer is asked again, naming what is wrong.
  const bad = (await client.runs.wait(other.thread_id, 'agent', {
    command: { resume: { action: 'later' } },
    config: scripted([{ content: 'unused' }]),
  })) as Values;
  expect(bad.__interrupt__?.[0]?.value.error).toMatch(/^Invalid answer to the MCP server's request: action: /);
  const declined = (await client.runs.wait(other.thread_id, 'agent', {
    command: { resume: { action: 'decline' } },
    config: scripted([{ content: 'No form then.' }]),
  })) as Values;
  const declinedResult = declined.messages.filter((m) => m.type === 'tool');
  expect(declinedResult).toHaveLength(1);
  expect(declinedResult[0]!.content).toContain('User declined to provide the requested information.');
  expect(declined.messages.at(-1)!.content).toBe('No form then.');
}

describe('MCP elicitation as an interrupt (embedded)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-elicit-'));
  const server = useEmbeddedServer('agentloop-mcp-elicit-data-', { MCP_CONFIG: elicitationConfig(dir) });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('interrupts with the server request; accept reaches the server with defaults filled in; decline too', () => elicitationJourney(server.url), 120_000);
});

describe('MCP elicitation as an interrupt (cluster: mcp-broker and orchestrator over NATS)', () => {
  let cluster: ClusterHarness;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-elicit-cluster-'));
    cluster = await startCluster({ env: { MCP_CONFIG: elicitationConfig(dir) } });
    const from = cluster.logs.length;
    cluster.start('mcp-broker', 1);
    await cluster.waitLog(/mcp-broker serving/, from, 90_000);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('interrupts with the server request; accept reaches the server with defaults filled in; decline too', () => elicitationJourney(cluster.url), 180_000);
});
