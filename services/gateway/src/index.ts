/**
 * @agentloop/gateway: the LangGraph Platform-compatible HTTP API (threads,
 * runs, SSE streams, auth by API key → tenant) and the webhook delivery worker.
 */
export { createGatewayApp, type GatewayDeps } from './app.js';
export { loadGatewayConfig, GatewayConfig } from './config.js';
export { startWebhookWorker, verifyWebhookSignature, signWebhook, deliverWebhook, type WebhookWorkerOptions, type VerifyWebhookOptions } from './webhooks.js';
export { DEFAULT_ASSISTANT_ID, GRAPH_ID } from './serialize.js';
export { DEFAULT_TENANT } from './auth.js';
export { gatewayPathRedactor } from './redaction.js';
export { withThreadResourceDeletion } from './thread-deletion.js';
export type { ThreadCheckpoints, CheckpointState, CheckpointRef } from './checkpoints.js';
export {
  startGrpcServer,
  createAgentLoopGrpcClient,
  AgentLoopGrpcClient,
  AGENTLOOP_GRPC_DEFINITION,
  type GrpcServer,
  type GrpcServerOptions,
  type GrpcContext,
  type AgentLoopClient,
  type AgentLoopClientOptions,
  type AgentLoopCallOptions,
} from './grpc/index.js';
// Assistants (issue 11): what a run takes from its assistant
export { resolveRunAssistant, mergeAssistantConfig, mergeContext, type RunAssistant } from './assistant-registry.js';
export { parseAgentConfig } from './assistant-config.js';
