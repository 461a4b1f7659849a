/** The gateway's gRPC API (proto/agentloop/v1/api.proto): server, service definition and a typed client. */
export { startGrpcServer, agentLoopImplementation, type GrpcServer, type GrpcServerOptions, type AgentLoopImplementation } from './server.js';
export { AGENTLOOP_GRPC_DEFINITION, methodPath, type AgentLoopMethodName, type RequestOf, type RequestInitOf, type ResponseOf } from './definition.js';
export { AgentLoopGrpcClient, createAgentLoopGrpcClient, type AgentLoopClient, type AgentLoopClientOptions, type AgentLoopCallOptions } from './client.js';
export { toGrpcStatus, GrpcStatusError, type GrpcStatus } from './status.js';
export type { GrpcContext } from './call.js';
