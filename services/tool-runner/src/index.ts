export { createToolRunner, TOOL_SUBJECTS, TOOL_RUNNER_SERVICE, TOOL_RUNNER_VERSION, type ToolRunner, type ToolRunnerDeps } from './service.js';
export { ToolRunnerEnv, loadToolRunnerConfig, type ToolRunnerConfig } from './config.js';
export {
  ToolRegistry,
  defineTool,
  argumentsJsonSchema,
  type ToolDefinition,
  type ToolContext,
  type ToolMetadata,
  type ToolOrigin,
  type ToolRecord,
  type SkippedTool,
  type VisibilityRequest,
  type VisibleTools,
} from './registry.js';
export {
  ToolsConfigFile,
  ToolConfigEntry,
  ToolsConfigError,
  parseToolsConfig,
  loadToolsConfig,
  DEFAULT_TOOLS_CONFIG_PATH,
  EMPTY_TOOLS_CONFIG,
  TOOL_NAME_PATTERN,
  type ToolsConfig,
  type ToolSettings,
} from './tools-config.js';
export {
  ModuleLoader,
  toolsFromModule,
  normalizeJsonSchema,
  CAN_IMPORT_TYPESCRIPT,
  type ModuleTool,
  type DiscoveryResult,
  type DiscoveryOptions,
} from './discovery.js';
export { ToolLoader, readToolsConfig, type ToolLoaderOptions, type ReloadResult } from './tool-loader.js';
export {
  createHttpFetchTool,
  vetUrl,
  systemLookup,
  HttpFetchArgs,
  HTTP_FETCH_METHODS,
  HTTP_FETCH_MAX_REDIRECTS,
  type HttpFetchOptions,
  type HostLookup,
  type VettedTarget,
} from './tools/http-fetch.js';
export { internalAddressReason, parseAllowList, isAllowed, type AllowEntry } from '@agentloop/net';
export { ToolExecutor, type ExecuteInput, type ExecuteOptions, type ToolResult, type ToolFailure } from './executor.js';
export { WorkspaceManager, Workspace, validateWorkspaceId, WORKSPACE_ID_PATTERN, type WorkspaceMetadata } from '@agentloop/workspace';
export { resolveWorkspacePath, isWithin, WRITABLE_DIRS, WORKSPACE_DIRS, type ResolvedPath, type ResolveOptions, type PathAccess } from '@agentloop/workspace';
export {
  ToolError,
  PathOutsideWorkspaceError,
  WorkspacePermissionError,
  FileNotFoundError,
  ToolArgumentsError,
  UnknownToolError,
  ToolTimeoutError,
  ToolDisabledError,
} from './errors.js';
export { builtinTools, type BuiltinToolOptions } from './tools/index.js';
export type { DocumentReader } from './tools/read-file.js';
export { createSearchFileTool, indexerDocumentReader, type IndexerClientOptions } from './tools/documents.js';
