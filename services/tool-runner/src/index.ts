export { createToolRunner, TOOL_SUBJECTS, TOOL_RUNNER_SERVICE, TOOL_RUNNER_VERSION, type ToolRunner, type ToolRunnerDeps } from './service.js';
export { ToolRunnerEnv, loadToolRunnerConfig, type ToolRunnerConfig } from './config.js';
export { ToolRegistry, defineTool, argumentsJsonSchema, type ToolDefinition, type ToolContext, type ToolMetadata } from './registry.js';
export { ToolExecutor, type ExecuteInput, type ExecuteOptions, type ToolResult, type ToolFailure } from './executor.js';
export { WorkspaceManager, Workspace, validateWorkspaceId, WORKSPACE_ID_PATTERN, type WorkspaceMetadata } from './workspace.js';
export { resolveWorkspacePath, isWithin, WRITABLE_DIRS, WORKSPACE_DIRS, type ResolvedPath, type ResolveOptions, type PathAccess } from './paths.js';
export {
  ToolError,
  PathOutsideWorkspaceError,
  WorkspacePermissionError,
  FileNotFoundError,
  ToolArgumentsError,
  UnknownToolError,
  ToolTimeoutError,
} from './errors.js';
export { builtinTools, type BuiltinToolOptions } from './tools/index.js';
export type { DocumentReader } from './tools/read-file.js';
