/**
 * MCP client capabilities end to end (issue 14, embedded), against the reference server-everything
 * over stdio: progress notifications of a long call stream to the client as `tools` events
 * (on_tool_event) between the call's start and end; `roots/list` is answered with the server's
 * configured roots; a sampling request during a call is answered by the run's base model slot (a
 * fake OpenAI-compatible server) through the orchestrator. The cluster twin:
 * mcp-client-capabilities-cluster.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { everythingConfig, expectConfiguredRoots, expectProgressStreamed, expectSamplingAnswered, modelEnv, SAMPLED_ANSWER } from './mcp-everything.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

describe('MCP client capabilities (embedded, server-everything over stdio)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let model: FakeOpenAi;
  beforeAll(async () => {
    model = await startFakeOpenAi({ respond: () => ({ answer: SAMPLED_ANSWER }) });
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-client-'));
    const env = { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', MCP_CONFIG: everythingConfig(dataDir), ...modelEnv(model) };
    server = await startEmbedded({ env, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('streams the progress notifications of a long call as tools events', () => expectProgressStreamed(server.url), 90_000);
  it("answers roots/list with the server's configured roots (never a run's workspace)", () => expectConfiguredRoots(server.url), 60_000);
  it(
    "answers a sampling request during a call on the run's base model slot, capped by the server's max_tokens",
    () => expectSamplingAnswered(server.url, model),
    60_000,
  );
});
