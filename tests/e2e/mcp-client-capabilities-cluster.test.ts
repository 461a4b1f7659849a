/**
 * MCP client capabilities across the cluster (issue 14): the mcp-broker process relays
 * server-everything's progress notifications and sampling requests over NATS to the orchestrator
 * process running the call, which streams the progress through the gateway and answers the
 * sampling on its model slots (a fake OpenAI-compatible server). Embedded twin:
 * mcp-client-capabilities.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startCluster, type ClusterHarness } from './helpers.js';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { everythingConfig, expectConfiguredRoots, expectProgressStreamed, expectSamplingAnswered, modelEnv, SAMPLED_ANSWER } from './mcp-everything.js';

describe('MCP client capabilities (cluster: mcp-broker and orchestrator over NATS)', () => {
  let cluster: ClusterHarness;
  let model: FakeOpenAi;
  let dir: string;
  beforeAll(async () => {
    model = await startFakeOpenAi({ respond: () => ({ answer: SAMPLED_ANSWER }) });
    dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-client-cluster-'));
    cluster = await startCluster({ env: { MCP_CONFIG: everythingConfig(dir), ...modelEnv(model) } });
    const from = cluster.logs.length;
    cluster.start('mcp-broker', 1);
    await cluster.waitLog(/mcp-broker serving/, from, 90_000);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams the progress of a long call and answers sampling and roots/list through the services', async () => {
    await expectProgressStreamed(cluster.url);
    await expectSamplingAnswered(cluster.url, model);
    await expectConfiguredRoots(cluster.url);
  }, 180_000);
});
