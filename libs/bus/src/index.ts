export {
  Headers,
  type Bus,
  type BusMessage,
  type RequestOptions,
  type HandlerContext,
  type RequestHandler,
  type EventHandler,
  type ServeOptions,
  type Subscription,
  type StoredRunEvent,
  type RunEventSubscribeOptions,
  type RunEventStream,
  type RunEndWatch,
  type RunEndWatchResult,
} from './types.js';
export { RemoteError, encodeErrorHeader, decodeErrorHeader } from './errors.js';
export { subjectMatches } from './subject.js';
export { ORCHESTRATOR_SUBJECTS } from './subjects.js';
export { MemoryBus, type MemoryBusOptions } from './memory-bus.js';
export { NatsBus, connectNatsBus, type NatsBusOptions, type ConnectNatsBusOptions } from './nats-bus.js';
export { DEFAULT_EVENT_STREAM_MAX_BYTES, MemoryRunEventStream, type MemoryRunEventStreamOptions } from './memory-events.js';
export {
  JetStreamRunEventStream,
  createJetStreamRunEventStream,
  RUN_EVENTS_STREAM,
  RUN_EVENTS_SUBJECT_PREFIX,
  type JetStreamRunEventStreamOptions,
  type CreateJetStreamRunEventStreamOptions,
} from './jetstream-events.js';
export {
  defineService,
  serviceClient,
  serveService,
  rpcHandler,
  subjectsOf,
  toServiceError,
  registerDefaultBinding,
  TENANT_MISMATCH_MESSAGE,
  type ServiceShape,
  type MethodName,
  type RequestOf,
  type RequestInitOf,
  type ResponseOf,
  type ResponseInitOf,
  type ErrorChannel,
  type MethodSpec,
  type ServiceSpec,
  type BoundMethod,
  type ServiceBinding,
  type CallOptions,
  type ServiceClient,
  type CallContext,
  type MethodImpl,
  type ServiceImpl,
  type ServeServiceOptions,
} from './service-rpc.js';
export { TOOL_RUNNER_RPC, SKILL_TOOLS_RPC, MCP_TOOLS_RPC, APPROVAL_RPC, SKILL_SANDBOX_RPC, INDEXER_RPC } from './services.js';
export { reloadBroadcast, type ReloadBroadcastOptions } from './reload-broadcast.js';
export {
  CLUSTER_RELOAD_SUBJECT,
  replicaInstance,
  requestClusterReload,
  serveClusterReload,
  type ServeClusterReloadOptions,
  type ServiceReloadResult,
} from './cluster-reload.js';
export {
  MCP_SERVER_RELOAD_SUBJECT,
  MCP_TOOLS_CHANGED_SUBJECT,
  requestMcpServerReload,
  serveMcpServerReload,
  publishMcpToolsChanged,
  onMcpToolsChanged,
  type McpServerReloadResult,
  type ServeMcpServerReloadOptions,
} from './mcp-admin.js';
export { toolProgressSubject, publishToolProgress, subscribeToolProgress, type ToolProgress } from './tool-progress.js';
export {
  SAMPLING_SUBJECT,
  decodeSamplingReply,
  decodeSamplingRequest,
  encodeSamplingReply,
  encodeSamplingRequest,
  type SamplingMessage,
  type SamplingRequest,
  type SamplingReply,
} from './sampling.js';
// Embedded mode's orchestrator thread (issue 9): the bus and run events over a MessagePort.
export { PortBus, type PortBusOptions } from './port-bus.js';
export { PortRunEventStream } from './port-events.js';
export { ThreadBus } from './thread-bus.js';
export { bridgeBus, bridgeRunEvents, type PortBridge } from './port-bridge.js';
