/**
 * An MCP tool's image reaches a vision model across the cluster (issue 14): the mcp-broker process
 * sends the PNG in ExecuteToolResponse.media over NATS, the orchestrator process keeps it in the
 * ToolMessage (checkpointed in MySQL) and routes the next call to the vision slot with the image.
 * Embedded twin: mcp-media.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startCluster, type ClusterHarness } from './helpers.js';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { expectImageSentToVisionModel, imageServerConfig, imageTurn, visionEnv } from './mcp-media.js';

describe('MCP images to a vision model (cluster: mcp-broker and orchestrator over NATS)', () => {
  let cluster: ClusterHarness;
  let model: FakeOpenAi;
  let dir: string;
  beforeAll(async () => {
    model = await startFakeOpenAi({ respond: imageTurn });
    dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-media-cluster-'));
    cluster = await startCluster({ env: { MCP_CONFIG: imageServerConfig(dir), ...visionEnv(model) } });
    const from = cluster.logs.length;
    cluster.start('mcp-broker', 1);
    await cluster.waitLog(/mcp-broker serving/, from, 90_000);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await model?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "sends get-tiny-image's PNG from the broker process to the vision slot as an image_url data URL",
    () => expectImageSentToVisionModel(cluster.url, model),
    180_000,
  );
});
