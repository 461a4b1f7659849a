/**
 * The services that execute runs in embedded mode — the orchestrator and the services it calls
 * per step (tool-runner, indexer, approval, skill sandbox, MCP broker) — started on the given
 * bus, store, queues and checkpointer. Both the one-thread embedded mode (embedded-app.ts) and
 * the orchestrator thread (orchestrator-worker.ts) start them through here.
 */
import type { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { Logger } from '@agentloop/core';
import type { Bus, RunEventStream } from '@agentloop/bus';
import type { CronScheduler, JobQueue } from '@agentloop/queue';
import { SqlStore, type Store } from '@agentloop/store';
import { createToolRunner, loadToolRunnerConfig } from '@agentloop/tool-runner';
import { createIndexer, loadIndexerConfig } from '@agentloop/indexer';
import { createApprovalService, loadApprovalConfig } from '@agentloop/approval';
import { createSkillSandbox, loadSkillSandboxConfig } from '@agentloop/skill-sandbox';
import { createMcpBroker, loadMcpBrokerConfig } from '@agentloop/mcp-broker';
import { createOrchestrator, loadOrchestratorConfig } from '@agentloop/orchestrator';

export interface RunServicesDeps {
  env: NodeJS.ProcessEnv;
  bus: Bus;
  store: Store;
  events: RunEventStream;
  runs: JobQueue;
  webhooks: JobQueue;
  checkpointer: SqliteSaver;
  scheduler: CronScheduler;
  loggerFor(service: string): Logger;
}

export interface RunServices {
  /** The orchestrator first (its runs hand back at a step boundary), then the services it called. */
  stop(): Promise<void>;
}

export async function startRunServices(d: RunServicesDeps): Promise<RunServices> {
  const toolRunner = createToolRunner({ bus: d.bus, logger: d.loggerFor('tool-runner'), config: loadToolRunnerConfig(d.env), useIndexer: true });
  await toolRunner.start();
  const indexer = createIndexer({ bus: d.bus, logger: d.loggerFor('indexer'), config: loadIndexerConfig(d.env) });
  await indexer.start();
  const approval = await createApprovalService({ bus: d.bus, store: d.store, logger: d.loggerFor('approval'), config: loadApprovalConfig(d.env) });
  await approval.start();
  const skillSandbox = createSkillSandbox({ bus: d.bus, logger: d.loggerFor('skill-sandbox'), config: loadSkillSandboxConfig(d.env) });
  await skillSandbox.start();
  const mcpBroker = await createMcpBroker({
    bus: d.bus,
    logger: d.loggerFor('mcp-broker'),
    config: loadMcpBrokerConfig(d.env),
    // Tenants' OAuth tokens of authorization code servers, in the embedded store.
    ...(d.store instanceof SqlStore ? { oauthStore: d.store.mcpOAuth } : {}),
  });
  await mcpBroker.start();
  const orchestrator = createOrchestrator({
    bus: d.bus,
    store: d.store,
    events: d.events,
    runs: d.runs,
    webhooks: d.webhooks,
    checkpointer: d.checkpointer,
    logger: d.loggerFor('orchestrator'),
    config: loadOrchestratorConfig(d.env),
    env: d.env,
    durability: 'async',
    scheduler: d.scheduler,
  });
  await orchestrator.start();
  return {
    async stop() {
      await orchestrator.stop();
      await toolRunner.stop();
      await indexer.stop();
      await approval.stop();
      await skillSandbox.stop();
      await mcpBroker.stop();
    },
  };
}
