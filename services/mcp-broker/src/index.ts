export { createMcpBroker, MCP_SUBJECTS, exposedName, formatResult, type McpBroker } from './service.js';
export { McpPool, serverEnvironment, type McpTool } from './pool.js';
export { loadMcpBrokerConfig, loadMcpFile, parseMcpFile, expandVars, McpBrokerEnv, DEFAULT_MCP_CONFIG_PATH, type McpBrokerConfig, type McpFile, type McpServerEntry } from './config.js';
