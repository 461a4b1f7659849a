/**
 * The client features against server-everything over stdio: it offers its roots and sampling tools
 * only to a client declaring them; a sampling or elicitation request is attributed to the one call in
 * flight and refused when two are (a shared connection does not say whose it is).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import type { McpCaller, Sampler } from './client-features.js';
import { parseMcpFile } from './config.js';
import { McpPool } from './pool.js';
import type { SamplingParams } from './sampling-relay.js';

const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

let pool: McpPool | undefined;
afterEach(async () => {
  await pool?.closeAll();
  pool = undefined;
});

function makePool(extra: Record<string, unknown>, sampler?: Sampler): McpPool {
  const file = parseMcpFile(JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra } } }));
  pool = new McpPool(file.servers, { logger: silentLogger(), startTimeoutMs: 30_000, env: { PATH: process.env.PATH }, ...(sampler ? { sampler } : {}) });
  return pool;
}

const textOf = (r: unknown) => (r as { content: Array<{ text?: string }> }).content.map((c) => c.text ?? '').join('\n');
const caller = (id: string): McpCaller => ({ tenantId: 't1', runId: 'run-1', toolCallId: id, toolName: `everything_${id}` });

/** Waits until the server's (re-)listed tools include `name`: its conditional tools are added after initialization. */
async function toolNames(p: McpPool, want: string): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const names = (p.knownTools().get('everything') ?? (await p.tools('everything'))).map((t) => t.name);
    if (names.includes(want) || Date.now() > deadline) return names;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('MCP client features (server-everything over stdio)', () => {
  it('declares roots always and sampling only for a server with `sampling:` set', async () => {
    const plain = makePool({});
    const names = await toolNames(plain, 'get-roots-list');
    expect(names).toContain('get-roots-list');
    expect(names).not.toContain('trigger-sampling-request');
    const text = textOf(await plain.callTool('everything', 'get-roots-list', {}, { exposedName: 'roots', timeoutMs: 10_000 }));
    expect(text).toContain('The client supports roots but no roots are currently configured');
  }, 60_000);

  it('attributes a sampling request to the only call in flight, and refuses it while another call runs', async () => {
    const asked: Array<{ caller: McpCaller; params: SamplingParams }> = [];
    const p = makePool({ sampling: { slot: 'base' } }, (server, c, params) => {
      asked.push({ caller: c, params });
      return Promise.resolve({ model: 'm', role: 'assistant', content: { type: 'text', text: `answer for ${c.toolCallId}` } });
    });
    expect(await toolNames(p, 'trigger-sampling-request')).toContain('trigger-sampling-request');

    const alone = textOf(
      await p.callTool('everything', 'trigger-sampling-request', { prompt: 'hello' }, { exposedName: 's', timeoutMs: 10_000, caller: caller('c1') }),
    );
    expect(alone).toContain('answer for c1');
    expect(asked.map((a) => a.caller.toolCallId)).toEqual(['c1']);
    expect(asked[0]!.params.messages[0]!.content).toEqual({ type: 'text', text: 'Resource trigger-sampling-request context: hello' });

    // A read-only call runs beside it (call-lanes.ts): two calls in flight, so the request is refused.
    const long = p.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 3, steps: 3 },
      { exposedName: 'l', timeoutMs: 20_000, readOnly: true, caller: caller('c2') },
    );
    const refused = await p
      .callTool('everything', 'trigger-sampling-request', { prompt: 'again' }, { exposedName: 's', timeoutMs: 10_000, caller: caller('c3') })
      .then(textOf, (err: unknown) => String(err));
    expect(refused).toMatch(/cannot be attributed to a run/);
    expect(asked).toHaveLength(1);
    await long;
  }, 60_000);

  it("declares elicitation: the server's form request goes to the one call in flight, refused while another runs", async () => {
    const p = makePool({});
    expect(await toolNames(p, 'trigger-elicitation-request')).toContain('trigger-elicitation-request');
    const asked: string[] = [];
    const withAnswer = (id: string): McpCaller => ({
      ...caller(id),
      elicit: (server, params) => {
        asked.push(`${server}:${id}:${params.message}`);
        return { action: 'accept', content: { name: `user of ${id}` } };
      },
    });
    const alone = textOf(await p.callTool('everything', 'trigger-elicitation-request', {}, { exposedName: 'e', timeoutMs: 10_000, caller: withAnswer('c1') }));
    expect(alone).toContain('- Name: user of c1');
    expect(asked).toEqual(['everything:c1:Please provide inputs for the following fields:']);

    const long = p.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 3, steps: 3 },
      { exposedName: 'l', timeoutMs: 20_000, readOnly: true, caller: caller('c2') },
    );
    const refused = await p
      .callTool('everything', 'trigger-elicitation-request', {}, { exposedName: 'e', timeoutMs: 10_000, caller: withAnswer('c3') })
      .then(textOf, (err: unknown) => String(err));
    expect(refused).toMatch(/Elicitation is answered only when one call to this server is in flight \(2 are\)/);
    expect(asked).toHaveLength(1);
    await long;
  }, 60_000);
});
