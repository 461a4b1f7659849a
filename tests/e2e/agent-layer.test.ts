/**
 * Issue 4 through the gateway (embedded mode, scripted model): custom tools
 * loaded from a directory and hot-reloaded, a broken module skipped with its
 * reason logged, todos, an @mentioned tool becoming visible, and a 200-message
 * thread trimmed without orphaned tool results.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { poll, scripted } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

type Msg = {
  type: string;
  content: string;
  name?: string;
  tool_calls?: unknown[];
  response_metadata?: { seen?: { messages: number; history: string[]; tools: string[] } };
};
type Values = { messages: Msg[]; todos?: Array<{ content: string; status: string; priority: string; id: string }> };

describe('agent layer through the gateway (embedded)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let toolsDir: string;
  let client: Client;
  const logLines: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-layer-'));
    toolsDir = path.join(dataDir, 'tools');
    rmSync(toolsDir, { recursive: true, force: true });
    mkdirSync(toolsDir, { recursive: true });
    writeFileSync(
      path.join(toolsDir, 'greet.mjs'),
      `export const greet = { name: 'greet', description: 'Greets someone', schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, execute: async ({ who }) => 'Hello, ' + who + '!' };\n`,
    );
    writeFileSync(
      path.join(toolsDir, 'shout.mjs'),
      `export const SCHEMA = { name: 'shout', display_name: 'Shout', description: 'Upper-cases text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };\nexport async function execute(params) { return String(params.text).toUpperCase(); }\n`,
    );
    writeFileSync(path.join(toolsDir, 'broken.mjs'), `throw new Error('this module is broken on purpose');\n`);
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    server = await startEmbedded({
      env: {
        DATA_DIR: dataDir,
        EMBEDDED_THREADS: EMBEDDED_TEST_THREADS,
        TOOLS_DIRS: toolsDir,
        TOOLS_WATCH: 'true',
        TOOLS_WATCH_DEBOUNCE_MS: '100',
        MAX_MESSAGE_HISTORY: '40',
      },
      port: 0,
      logger: pino({ level: 'info' }, sink),
    });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const run = async (content: string, turns: unknown[], thread?: string) => {
    const t = thread ?? (await client.threads.create()).thread_id;
    return (await client.runs.wait(t, 'agent', { input: { messages: [{ role: 'user', content }] }, config: scripted(turns) })) as unknown as Values;
  };
  const lastAi = (v: Values) => v.messages.filter((m) => m.type === 'ai').at(-1)!;

  it('loads tools from a directory (named export and the plain SCHEMA+execute form) and offers them to the model', async () => {
    const v = await run('greet Ada, then shout', [
      { tool_calls: [{ name: 'greet', args: { who: 'Ada' } }] },
      { tool_calls: [{ name: 'shout', args: { text: 'hi' } }] },
      { content: 'done' },
    ]);
    const tools = v.messages.filter((m) => m.type === 'tool').map((m) => m.content);
    expect(tools).toEqual(['Hello, Ada!', 'HI']);
    expect(v.messages.find((m) => m.type === 'ai')!.response_metadata!.seen!.tools).toEqual(expect.arrayContaining(['greet', 'shout', 'read_file']));
  });

  it('skips a broken tool module and logs why', () => {
    const line = logLines.find((l) => l.includes('broken.mjs') && l.includes('this module is broken on purpose'));
    expect(line).toBeDefined();
    expect(line).toContain('this module is broken on purpose');
  });

  it('hot-reloads: a module added while running becomes callable without a restart', async () => {
    writeFileSync(
      path.join(toolsDir, 'later.mjs'),
      `export const later = { name: 'later', description: 'Added later', schema: { type: 'object', properties: {} }, execute: async () => 'I was added later' };\n`,
    );
    const v = await poll(
      async () => {
        const r = await run('call later', [{ tool_calls: [{ name: 'later', args: {} }] }, { content: 'ok' }]);
        const tool = r.messages.find((m) => m.type === 'tool')!;
        return tool.content === 'I was added later' ? r : undefined;
      },
      20_000,
      300,
    );
    expect(v.messages.find((m) => m.type === 'tool')!.content).toBe('I was added later');
  });

  it('keeps todos in the run state through todo_write / todo_read', async () => {
    const v = await run('plan it', [
      {
        tool_calls: [
          {
            name: 'todo_write',
            args: {
              todos: [
                { content: 'Read the brief', status: 'in_progress' },
                { content: 'Write the report', status: 'pending' },
              ],
            },
          },
        ],
      },
      { tool_calls: [{ name: 'todo_read', args: {} }] },
      { content: 'planned' },
    ]);
    expect(v.todos?.map((t) => [t.content, t.status, t.priority])).toEqual([
      ['Read the brief', 'in_progress', 'medium'],
      ['Write the report', 'pending', 'medium'],
    ]);
    expect(v.todos?.every((t) => typeof t.id === 'string' && t.id.length > 0)).toBe(true);
    const read = v.messages.filter((m) => m.type === 'tool')[1]!;
    expect(read.content).toContain('Write the report');
  });

  it('rejects two in_progress todos with a clear error', async () => {
    const v = await run('plan badly', [
      {
        tool_calls: [
          {
            name: 'todo_write',
            args: {
              todos: [
                { content: 'a', status: 'in_progress' },
                { content: 'b', status: 'in_progress' },
              ],
            },
          },
        ],
      },
      { content: 'ok' },
    ]);
    expect(v.messages.find((m) => m.type === 'tool')!.content).toMatch(/^Error:.*in_progress/);
  });

  it('makes a disabled tool visible only when the user @mentions it', async () => {
    const plain = await run('fetch something', [{ content: 'no' }]);
    expect(lastAi(plain).response_metadata!.seen!.tools).not.toContain('http_fetch');
    const mentioned = await run('use @http_fetch please', [{ content: 'ok' }]);
    expect(lastAi(mentioned).response_metadata!.seen!.tools).toContain('http_fetch');
  });

  it('trims a 200-message thread for the model without orphaned tool results', async () => {
    const history: unknown[] = [];
    for (let i = 0; i < 50; i++) {
      const id = `hist_${i}`;
      history.push({ type: 'human', content: `question ${i}` });
      history.push({ type: 'ai', content: '', tool_calls: [{ id, name: 'now', args: {} }] });
      history.push({ type: 'tool', content: `2026-01-01 ${i}`, tool_call_id: id, name: 'now' });
      history.push({ type: 'ai', content: `answer ${i}` });
    }
    expect(history).toHaveLength(200);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: history }, config: scripted([{ content: 'seeded' }]) });
    const v = await run('and now?', [{ content: 'trimmed fine' }], thread.thread_id);
    expect(v.messages.length).toBeGreaterThan(200); // the state keeps everything
    const seen = lastAi(v).response_metadata!.seen!;
    expect(seen.history.length).toBeLessThanOrEqual(40);
    expect(seen.history[0]).not.toBe('tool');
    seen.history.forEach((t, i) => {
      if (t === 'tool') expect(['ai', 'tool']).toContain(seen.history[i - 1]);
    });
    expect(seen.history.at(-1)).toBe('human');
  });
});
