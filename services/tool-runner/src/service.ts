import { readFileSync } from 'node:fs';
import type { Bus, Subscription } from '@agentloop/bus';
import type { Logger } from '@agentloop/core';
import type { ToolRunnerConfig } from './config.js';
import { ToolExecutor } from './executor.js';
import { executeToolHandler } from './handlers/execute.js';
import { listToolsHandler } from './handlers/list.js';
import { workspaceHandler } from './handlers/workspace.js';
import { ToolRegistry } from './registry.js';
import { builtinTools } from './tools/index.js';
import type { DocumentReader } from './tools/read-file.js';
import { WorkspaceManager } from './workspace.js';

export const TOOL_SUBJECTS = {
  list: 'agentloop.tools.list',
  execute: 'agentloop.tools.execute',
  workspace: 'agentloop.tools.workspace',
} as const;

/** Queue group and NATS micro-service name. */
export const TOOL_RUNNER_SERVICE = 'tool-runner';

/** From package.json; src/ and dist/ are both one level below it. */
export const TOOL_RUNNER_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export interface ToolRunnerDeps {
  bus: Bus;
  logger: Logger;
  config: ToolRunnerConfig;
  /** Handles documents in read_file (the indexer, in a later issue). */
  documentReaders?: readonly DocumentReader[];
}

export interface ToolRunner {
  /** Prepares the workspace root and serves the three subjects. */
  start(): Promise<void>;
  /** Stops serving (in-flight requests finish through the bus's drain). Idempotent. */
  stop(): Promise<void>;
  /** Built-in tools are registered; more may be added before start(). */
  readonly registry: ToolRegistry;
  readonly workspaces: WorkspaceManager;
  readonly executor: ToolExecutor;
}

export function createToolRunner({ bus, logger: baseLogger, config, documentReaders }: ToolRunnerDeps): ToolRunner {
  const logger = baseLogger.child({ component: 'tool-runner' });
  const registry = new ToolRegistry();
  for (const tool of builtinTools({
    textFileMaxBytes: config.TEXT_FILE_MAX_BYTES,
    textPreviewBytes: config.TEXT_PREVIEW_BYTES,
    writeMaxBytes: config.WRITE_MAX_BYTES,
    findMaxResults: config.FIND_MAX_RESULTS,
    enableDebug: config.TOOLS_ENABLE_DEBUG,
    ...(documentReaders ? { documentReaders } : {}),
  })) {
    registry.register(tool);
  }
  const workspaces = new WorkspaceManager({
    root: config.WORKSPACE_ROOT,
    skillRoots: config.SKILLS_ROOT ? [config.SKILLS_ROOT] : [],
    logger,
  });
  const executor = new ToolExecutor({ registry, workspaces, logger, defaultTimeoutMs: config.TOOL_DEFAULT_TIMEOUT_MS });
  let subs: Subscription[] = [];

  return {
    registry,
    workspaces,
    executor,
    async start() {
      if (subs.length > 0) return;
      await workspaces.init();
      const opts = { queue: TOOL_RUNNER_SERVICE, version: TOOL_RUNNER_VERSION, description: 'AgentLoop tools and workspaces' };
      try {
        subs.push(await bus.serve(TOOL_SUBJECTS.list, opts, listToolsHandler(registry)));
        subs.push(await bus.serve(TOOL_SUBJECTS.execute, opts, executeToolHandler(executor, logger)));
        subs.push(await bus.serve(TOOL_SUBJECTS.workspace, opts, workspaceHandler(workspaces, logger)));
      } catch (err) {
        await this.stop();
        throw err;
      }
      logger.info({ tools: registry.names(), version: TOOL_RUNNER_VERSION, debug_tools: config.TOOLS_ENABLE_DEBUG }, 'tool-runner serving');
    },
    async stop() {
      const current = subs;
      subs = [];
      await Promise.all(current.map((s) => s.unsubscribe()));
      if (current.length > 0) logger.info('tool-runner stopped');
    },
  };
}
