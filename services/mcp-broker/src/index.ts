export { createMcpBroker, MCP_SUBJECTS, MCP_BROKER_VERSION, type McpBroker, type McpBrokerDeps } from './service.js';
export { McpPool, McpConnection, serverEnvironment, serverHeaders, type McpPoolOptions, type McpServerStatus } from './pool.js';
export { McpToolProvider, type ListInput, type ListOutput, type ExecuteInput, type ExecuteOutput } from './provider.js';
export { buildCatalog, baseName, sanitizeName, candidateServers, type Catalog, type CatalogTool, type McpTool, type NameCollision } from './naming.js';
export { formatResult, truncateUtf8, type CallToolResultLike } from './format.js';
export {
  loadMcpBrokerConfig,
  loadMcpFile,
  parseMcpFile,
  expandVars,
  McpBrokerEnv,
  McpFile,
  McpServerEntry,
  McpToolEntry,
  MissingVariableError,
  DEFAULT_MCP_CONFIG_PATH,
  TOOL_NAME_PATTERN,
  type McpBrokerConfig,
} from './config.js';
export {
  McpBrokerError,
  UnknownMcpToolError,
  DisabledMcpToolError,
  McpArgumentsError,
  McpServerUnavailableError,
  McpCallTimeoutError,
  McpCallFailedError,
} from './errors.js';
