/**
 * An MCP tool's image reaches a vision model as an image part (issue 14), embedded mode; the
 * checks are in mcp-media.ts, the cluster twin is mcp-media-cluster.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { expectImageSentToVisionModel, imageServerConfig, imageTurn, visionEnv } from './mcp-media.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

describe('MCP images to a vision model (embedded, server-everything over stdio)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let model: FakeOpenAi;
  beforeAll(async () => {
    model = await startFakeOpenAi({ respond: imageTurn });
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-media-'));
    server = await startEmbedded({
      env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', MCP_CONFIG: imageServerConfig(dataDir), ...visionEnv(model) },
      port: 0,
    });
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    "sends get-tiny-image's PNG to the vision slot as an image_url data URL after the tool message",
    () => expectImageSentToVisionModel(server.url, model),
    90_000,
  );
});
