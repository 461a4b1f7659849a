/**
 * MCP elicitation through the broker's ExecuteTool (docs/mcp-client-features.md "Elicitation"),
 * against a real SDK server whose tools ask for input mid-call (testing/elicit-server.ts): a tool
 * that may run again comes back as "needs input", and its retry answers the server with the user's
 * answer (schema defaults filled in, content checked); a tool that may not is declined with a note.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Headers, MemoryBus, type Bus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { ExecuteToolRequestSchema, ExecuteToolResponseSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import { loadMcpBrokerConfig, parseMcpFile } from './config.js';
import { MCP_SUBJECTS, createMcpBroker, type McpBroker } from './service.js';
import { ELICIT_SERVER_SCRIPT, serverCommand } from './testing/index.js';

let bus: Bus | undefined;
let broker: McpBroker | undefined;
afterEach(async () => {
  await broker?.stop();
  await bus?.close();
  broker = undefined;
  bus = undefined;
});

const server = serverCommand(ELICIT_SERVER_SCRIPT);

async function setup(toolsYaml = ''): Promise<void> {
  bus = new MemoryBus();
  const yaml = `
servers:
  elicit:
    command: ${JSON.stringify(server.command)}
    args: ${JSON.stringify(server.args)}
    start_timeout_ms: 30000${toolsYaml}
`;
  broker = await createMcpBroker({
    bus,
    logger: silentLogger(),
    config: loadMcpBrokerConfig({ MCP_CALL_TIMEOUT_MS: '20000' }),
    file: parseMcpFile(yaml),
    env: { PATH: process.env.PATH },
  });
  await broker.start();
}

async function call(toolName: string, elicitationAnswerJson = '') {
  const req = create(ExecuteToolRequestSchema, { tenantId: 'acme', toolName, argsJson: '{}', runId: 'run-1', toolCallId: 'c1', elicitationAnswerJson });
  const reply = await bus!.request(MCP_SUBJECTS.toolsExecute, toBinary(ExecuteToolRequestSchema, req), {
    timeoutMs: 30_000,
    headers: { [Headers.tenant]: 'acme' },
  });
  return fromBinary(ExecuteToolResponseSchema, reply.data);
}

/** What the server received, from its `answer: {...}` text. */
const received = (content: string) => JSON.parse(content.slice(content.indexOf('{'), content.lastIndexOf('}') + 1)) as unknown;

describe('MCP elicitation through the broker', () => {
  it('returns "needs input" for an idempotent tool, with the server, message and requested schema', async () => {
    await setup();
    const res = await call('elicit_book_table');
    expect(res.error).toBeUndefined();
    expect(res.content).toBe('');
    expect(res.idempotent).toBe(true);
    expect(res.elicitation).toMatchObject({ server: 'elicit', message: 'Who is the table for?', mode: 'form', url: '' });
    expect(JSON.parse(res.elicitation!.requestedSchemaJson)).toMatchObject({ required: ['name'], properties: { seats: { default: 2 } } });
  }, 60_000);

  it("answers the retried call's elicitation with the user's content, the schema defaults filled in", async () => {
    await setup();
    const res = await call('elicit_book_table', JSON.stringify({ action: 'accept', content: { name: 'Ada' } }));
    expect(res.error).toBeUndefined();
    expect(res.elicitation).toBeUndefined();
    expect(received(res.content)).toEqual({ action: 'accept', content: { name: 'Ada', seats: 2 } });
  }, 60_000);

  it('passes a decline or cancel of the user to the server', async () => {
    await setup();
    expect(received((await call('elicit_book_table', JSON.stringify({ action: 'decline' }))).content)).toEqual({ action: 'decline' });
    expect(received((await call('elicit_book_table', JSON.stringify({ action: 'cancel' }))).content)).toEqual({ action: 'cancel' });
  }, 60_000);

  it('refuses an answer that does not match the requested schema, naming each mismatch', async () => {
    await setup();
    const res = await call('elicit_book_table', JSON.stringify({ action: 'accept', content: { seats: 40 } }));
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    expect(res.content).toMatch(
      /^Error: Invalid arguments for elicit_book_table: MCP server elicit asked: "Who is the table for\?", and the answer does not match/,
    );
    expect(res.content).toContain("must have required property 'name'");
    expect(res.content).toContain('/seats must be <= 12');
  }, 60_000);

  it('refuses a malformed answer, naming the field', async () => {
    await setup();
    const res = await call('elicit_book_table', JSON.stringify({ action: 'maybe' }));
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    expect(res.content).toContain('elicitation_answer_json.action');
    const notJson = await call('elicit_book_table', '{nope');
    expect(notJson.content).toContain('elicitation_answer_json is not valid JSON');
  }, 60_000);

  it('declines for a tool that may not run again, and tells the model to ask the user itself', async () => {
    await setup();
    const res = await call('elicit_place_order');
    expect(res.error).toBeUndefined();
    expect(res.elicitation).toBeUndefined();
    expect(res.content).toContain('answer: {"action":"decline"}');
    expect(res.content).toContain('[MCP server elicit asked the user for input (fields: name, seats): "Who is the order for?"');
    expect(res.content).toContain('elicit_place_order is not marked idempotent');
    expect(res.content).toContain('Ask the user for this yourself (ask_human)');
  }, 60_000);

  it("treats a tool the operator marks idempotent as one that may wait for the user's input", async () => {
    await setup(`
    tools:
      place_order: { idempotent: true }`);
    const res = await call('elicit_place_order');
    expect(res.idempotent).toBe(true);
    expect(res.elicitation).toMatchObject({ server: 'elicit', message: 'Who is the order for?', mode: 'form' });
  }, 60_000);

  it('passes a url-mode request on with its url, and its acceptance back', async () => {
    await setup();
    const res = await call('elicit_open_page');
    expect(res.elicitation).toMatchObject({
      server: 'elicit',
      mode: 'url',
      url: 'https://example.com/sign-in',
      message: 'Sign in to continue',
      requestedSchemaJson: '',
    });
    const retried = await call('elicit_open_page', JSON.stringify({ action: 'accept' }));
    expect(received(retried.content)).toEqual({ action: 'accept' });
  }, 60_000);
});
