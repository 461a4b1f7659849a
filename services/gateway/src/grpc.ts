/**
 * The gRPC API's entry at its original path, so `./grpc.js` imports (main.ts, context.ts) keep
 * working; the code lives in ./grpc/ (see ./grpc/index.ts for everything it exports).
 */
export { startGrpcServer, AgentLoopGrpcClient, AGENTLOOP_GRPC_DEFINITION, type GrpcServer, type GrpcContext } from './grpc/index.js';
