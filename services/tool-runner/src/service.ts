import { readFileSync } from 'node:fs';
import { TOOL_RUNNER_RPC, replicaInstance, serveClusterReload, serveService, type Bus, type Subscription } from '@agentloop/bus';
import { type Logger } from '@agentloop/core';
import type { ToolRunnerConfig } from './config.js';
import { ToolExecutor } from './executor.js';
import { executeTool } from './handlers/execute.js';
import { listTools } from './handlers/list.js';
import { toolReloads } from './handlers/reload.js';
import { manageWorkspace } from './handlers/workspace.js';
import { ToolRegistry } from './registry.js';
import { ToolLoader, type ReloadResult } from './tool-loader.js';
import type { HostLookup } from './tools/http-fetch.js';
import { Sandbox, sandboxConfigFromEnv } from '@agentloop/sandbox';
import { builtinTools } from './tools/index.js';
import { providerToolOptions } from './tools/provider-tools.js';
import { createSearchFileTool, indexerDocumentReader } from './tools/documents.js';
import type { DocumentReader } from './tools/read-file.js';
import { WorkspaceManager } from '@agentloop/workspace';
import { ReplayLog } from './replay-log.js';

/** This service's subjects: its RPCs' (declared once, in TOOL_RUNNER_RPC of @agentloop/bus) and its reload broadcast. */
export const TOOL_SUBJECTS = {
  list: TOOL_RUNNER_RPC.methods.listTools.subject,
  execute: TOOL_RUNNER_RPC.methods.executeTool.subject,
  workspace: TOOL_RUNNER_RPC.methods.workspace.subject,
  /** Request (queue group): one replica answers and re-publishes on `reloadBroadcast`. */
  reload: TOOL_RUNNER_RPC.methods.reloadTools.subject,
  /** Plain subscription on every replica (no queue group): ReloadToolsRequest. */
  reloadBroadcast: `${TOOL_RUNNER_RPC.methods.reloadTools.subject}.broadcast`,
} as const;

/** Queue group and NATS micro-service name. */
export const TOOL_RUNNER_SERVICE = TOOL_RUNNER_RPC.queue;

/** From package.json; src/ and dist/ are both one level below it. */
export const TOOL_RUNNER_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface ToolRunnerDeps {
  bus: Bus;
  logger: Logger;
  config: ToolRunnerConfig;
  /** Handles documents in read_file (the indexer, in a later issue). */
  documentReaders?: readonly DocumentReader[];
  /** Read documents and offer search_file through the indexer service (agentloop.indexer.*). */
  useIndexer?: boolean;
  /** Resolver of http_fetch (tests inject one). Default: dns.lookup. */
  httpLookup?: HostLookup;
}

export interface ToolRunner {
  /**
   * Loads tools.yaml and the tool modules (an invalid tools.yaml throws a
   * ToolsConfigError), prepares the workspace root and serves the subjects.
   */
  start(): Promise<void>;
  /** Re-reads tools.yaml and re-imports the tool modules on this replica only. */
  reload(reason?: string): Promise<ReloadResult>;
  /** Stops serving (in-flight requests finish through the bus's drain). Idempotent. */
  stop(): Promise<void>;
  /** Built-in tools are registered; more may be added before start(). */
  readonly registry: ToolRegistry;
  readonly workspaces: WorkspaceManager;
  readonly executor: ToolExecutor;
  readonly loader: ToolLoader;
  /** Id of this replica in reload broadcasts. */
  readonly replica: string;
}

export function createToolRunner({ bus, logger: baseLogger, config, documentReaders, httpLookup, useIndexer }: ToolRunnerDeps): ToolRunner {
  const logger = baseLogger.child({ component: 'tool-runner' });
  const registry = new ToolRegistry();
  // Documents (PDF, DOCX, XLSX, PPTX) and search_file are served by the indexer service over the bus.
  const indexer = useIndexer ? { bus, timeoutMs: config.INDEXER_TIMEOUT_MS } : undefined;
  const readers = [...(documentReaders ?? []), ...(indexer ? [indexerDocumentReader(indexer)] : [])];
  const sandbox = new Sandbox(config.sandbox ?? sandboxConfigFromEnv({}));
  for (const tool of builtinTools({
    textFileMaxBytes: config.TEXT_FILE_MAX_BYTES,
    textPreviewBytes: config.TEXT_PREVIEW_BYTES,
    writeMaxBytes: config.WRITE_MAX_BYTES,
    findMaxResults: config.FIND_MAX_RESULTS,
    enableDebug: config.TOOLS_ENABLE_DEBUG,
    ...(readers.length > 0 ? { documentReaders: readers } : {}),
    httpFetch: {
      allow: config.HTTP_FETCH_ALLOW,
      maxBytes: config.HTTP_FETCH_MAX_BYTES,
      timeoutMs: config.HTTP_FETCH_TIMEOUT_MS,
      ...(httpLookup ? { lookup: httpLookup } : {}),
    },
    sandbox,
    providers: providerToolOptions(config, httpLookup),
  })) {
    registry.register(tool);
  }
  if (indexer) registry.register(createSearchFileTool(indexer));
  const workspaces = new WorkspaceManager({
    root: config.WORKSPACE_ROOT,
    skillRoots: config.SKILLS_ROOT ? [config.SKILLS_ROOT] : [],
    logger,
  });
  const executor = new ToolExecutor({ registry, workspaces, logger, defaultTimeoutMs: config.TOOL_DEFAULT_TIMEOUT_MS });
  const loader = new ToolLoader({
    registry,
    logger,
    dirs: config.TOOLS_DIRS,
    importTimeoutMs: config.TOOLS_IMPORT_TIMEOUT_MS,
    ...(config.TOOLS_CONFIG !== undefined ? { configPath: config.TOOLS_CONFIG } : {}),
  });
  const replica = replicaInstance();
  let subs: Subscription[] = [];
  let stopWatching: (() => void) | undefined;
  let booted = false;

  return {
    registry,
    workspaces,
    executor,
    loader,
    replica,
    reload: (reason = 'local') => loader.reload(reason),
    async start() {
      if (subs.length > 0) return;
      if (!booted) {
        await loader.boot();
        booted = true;
      }
      await workspaces.init();
      const reloads = toolReloads({ loader, bus, logger, replica, broadcastSubject: TOOL_SUBJECTS.reloadBroadcast });
      try {
        subs.push(
          await serveService(
            bus,
            TOOL_RUNNER_RPC,
            {
              listTools: listTools(registry),
              executeTool: executeTool(executor, logger, new ReplayLog(workspaces)),
              workspace: manageWorkspace(workspaces, logger),
              reloadTools: reloads.method,
            },
            { logger, version: TOOL_RUNNER_VERSION, description: 'AgentLoop tools and workspaces', redact: (text) => workspaces.redact(text) },
          ),
        );
        subs.push(await bus.subscribe(TOOL_SUBJECTS.reloadBroadcast, reloads.broadcastHandler));
        // POST /admin/reload: every replica reloads and answers (libs/bus cluster-reload.ts).
        subs.push(
          await serveClusterReload(bus, {
            service: TOOL_RUNNER_SERVICE,
            instance: replica,
            logger,
            reload: async (reason) => {
              const res = await loader.reload(reason);
              if (res.configError) throw new Error(`tools.yaml not reloaded, the previous configuration stays in force: ${res.configError}`);
              return { tools: res.registered, loaded: res.loaded, skipped: res.skipped, unknown_configured: res.unknownConfigured };
            },
          }),
        );
      } catch (err) {
        await this.stop();
        throw err;
      }
      if (config.TOOLS_WATCH) stopWatching = loader.watch(config.TOOLS_WATCH_DEBOUNCE_MS);
      logger.info({ tools: registry.names(), replica, version: TOOL_RUNNER_VERSION, debug_tools: config.TOOLS_ENABLE_DEBUG }, 'tool-runner serving');
      // Operators see whether runs are capped by a cgroup or by prlimit only, and what the network allows.
      const status = await sandbox.status();
      logger.info({ unavailable: status.unavailable, limits: status.limits, network: status.network }, 'code sandbox status');
    },
    async stop() {
      stopWatching?.();
      stopWatching = undefined;
      const current = subs;
      subs = [];
      await Promise.all(current.map((s) => s.unsubscribe()));
      await sandbox.close();
      if (current.length > 0) logger.info('tool-runner stopped');
    },
  };
}
