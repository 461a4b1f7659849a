import path from 'node:path';
import { silentLogger, type Logger } from '@agentloop/core';
import { loadToolRunnerConfig, type ToolRunnerConfig } from '../config.js';
import { ToolExecutor, type ToolResult } from '../executor.js';
import { ToolRegistry } from '../registry.js';
import { builtinTools } from '../tools/index.js';
import type { DocumentReader } from '../tools/read-file.js';
import { Sandbox } from '@agentloop/sandbox';
import { WorkspaceManager, createTempDir as createTempDirIn, type TempDir, type Workspace } from '@agentloop/workspace';

export { type TempDir } from '@agentloop/workspace';

/** A temporary folder removed on dispose. */
export function createTempDir(prefix = 'agentloop-tools-'): Promise<TempDir> {
  return createTempDirIn(prefix);
}

export interface ToolHarnessOptions {
  /** Environment overrides (WORKSPACE_ROOT is set to a temp folder unless given). */
  env?: Record<string, string>;
  logger?: Logger;
  documentReaders?: readonly DocumentReader[];
  tenantId?: string;
  threadId?: string;
}

/**
 * Built-in tools, workspaces and the executor over a temporary WORKSPACE_ROOT,
 * without a bus: `call(tool, args)` runs one tool call for one thread.
 */
export interface ToolHarness extends AsyncDisposable {
  config: ToolRunnerConfig;
  registry: ToolRegistry;
  workspaces: WorkspaceManager;
  executor: ToolExecutor;
  /** The harness thread's workspace (created). */
  workspace: Workspace;
  call(tool: string, args?: Record<string, unknown>, opts?: { signal?: AbortSignal; deadline?: number }): Promise<ToolResult>;
}

export async function createToolHarness(opts: ToolHarnessOptions = {}): Promise<ToolHarness> {
  const tmp = await createTempDir();
  const config = loadToolRunnerConfig({ WORKSPACE_ROOT: path.join(tmp.path, 'workspaces'), ...opts.env });
  const logger = opts.logger ?? silentLogger();
  const registry = new ToolRegistry();
  const sandbox = config.sandbox ? new Sandbox(config.sandbox) : undefined;
  for (const tool of builtinTools({
    textFileMaxBytes: config.TEXT_FILE_MAX_BYTES,
    textPreviewBytes: config.TEXT_PREVIEW_BYTES,
    writeMaxBytes: config.WRITE_MAX_BYTES,
    findMaxResults: config.FIND_MAX_RESULTS,
    enableDebug: config.TOOLS_ENABLE_DEBUG,
    ...(opts.documentReaders ? { documentReaders: opts.documentReaders } : {}),
    ...(sandbox ? { sandbox } : {}),
  })) {
    registry.register(tool);
  }
  const workspaces = new WorkspaceManager({ root: config.WORKSPACE_ROOT, skillRoots: config.SKILLS_ROOT ? [config.SKILLS_ROOT] : [], logger });
  const executor = new ToolExecutor({ registry, workspaces, logger, defaultTimeoutMs: config.TOOL_DEFAULT_TIMEOUT_MS });
  const tenantId = opts.tenantId ?? 'tenant-a';
  const threadId = opts.threadId ?? 'thread-1';
  const workspace = await workspaces.ensure(tenantId, threadId);
  let n = 0;
  return {
    config,
    registry,
    workspaces,
    executor,
    workspace,
    call: (tool, args = {}, callOpts = {}) =>
      executor.execute({ tenantId, threadId, runId: 'run-1', toolCallId: `call-${++n}`, toolName: tool, argsJson: JSON.stringify(args) }, callOpts),
    [Symbol.asyncDispose]: async () => {
      await sandbox?.close();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

export { startFakeProviders, fakeSpeechAudio, type FakeProviders, type FakeRequest, type FakeHit } from './fake-providers.js';
