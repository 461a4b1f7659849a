/** Shared set-up of the gRPC test files: a test gateway with two tenants, its gRPC server and a client per tenant. */
import type * as grpc from '@grpc/grpc-js';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../testing/index.js';
import { createAgentLoopGrpcClient, startGrpcServer, type AgentLoopClient, type GrpcServer } from './index.js';

export interface TwoTenantGrpc {
  gw: TestGateway;
  /** Tenant "acme". */
  acme: AgentLoopClient;
  /** Tenant "globex". */
  globex: AgentLoopClient;
  close(): Promise<void>;
}

export async function startTwoTenantGrpc(opts: TestGatewayOptions = {}): Promise<TwoTenantGrpc> {
  const gw = await startTestGateway({ ...opts, env: { AGENTLOOP_API_KEYS: 'acme-key:acme,globex-key:globex', ...opts.env } });
  const server: GrpcServer = await startGrpcServer({ context: gw.app.agentloop, host: '127.0.0.1', port: 0 });
  const acme = createAgentLoopGrpcClient(`127.0.0.1:${server.port}`, { apiKey: 'acme-key' });
  const globex = createAgentLoopGrpcClient(`127.0.0.1:${server.port}`, { apiKey: 'globex-key' });
  return {
    gw,
    acme,
    globex,
    async close() {
      acme.close();
      globex.close();
      await server.close();
      await gw.close();
    },
  };
}

/** The rejection of a call, as a grpc-js ServiceError. */
export async function failure(p: Promise<unknown>): Promise<grpc.ServiceError> {
  return p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: grpc.ServiceError) => err,
  );
}
