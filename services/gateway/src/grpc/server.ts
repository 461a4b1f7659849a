import * as grpc from '@grpc/grpc-js';
import { AgentLoopService } from '@agentloop/proto';
import type { Logger } from '@agentloop/core';
import { serverStreamHandler, unaryHandler, type CallEnv, type GrpcContext, type StreamImpl, type UnaryImpl } from './call.js';
import { AGENTLOOP_GRPC_DEFINITION, type AgentLoopMethodName, type AgentLoopMethods, type RequestOf, type ResponseOf } from './definition.js';
import { runHandlers } from './handlers/runs.js';
import { streamHandlers } from './handlers/streams.js';
import { threadHandlers } from './handlers/threads.js';
import { cronHandlers } from './handlers/crons.js';
import { storeHandlers } from './handlers/store.js';
import { assistantHandlers } from './handlers/assistants.js';

/** One implementation per RPC of api.proto: adding an RPC to the proto without implementing it fails to compile. */
export type AgentLoopImplementation = {
  [K in AgentLoopMethodName]: AgentLoopMethods[K]['methodKind'] extends 'unary'
    ? UnaryImpl<RequestOf<K>, ResponseOf<K>>
    : StreamImpl<RequestOf<K>, ResponseOf<K>>;
};

export function agentLoopImplementation(ctx: GrpcContext): AgentLoopImplementation {
  return { ...threadHandlers(ctx), ...runHandlers(ctx), ...streamHandlers(ctx), ...cronHandlers(ctx), ...storeHandlers(ctx), ...assistantHandlers(ctx) };
}

/** The implementation as grpc-js handlers (auth, scope, tracing and status mapping around each). */
function grpcHandlers(env: CallEnv): grpc.UntypedServiceImplementation {
  const impl = agentLoopImplementation(env.ctx);
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of AgentLoopService.methods) {
    const name = method.localName as AgentLoopMethodName;
    switch (method.methodKind) {
      case 'unary':
        handlers[name] = unaryHandler(env, method, impl[name] as unknown as UnaryImpl<unknown, object>) as grpc.UntypedHandleCall;
        break;
      case 'server_streaming':
        handlers[name] = serverStreamHandler(env, method, impl[name] as unknown as StreamImpl<unknown, unknown>) as grpc.UntypedHandleCall;
        break;
      default:
        throw new Error(`RPC ${method.name} is ${method.methodKind}, which the gateway does not serve`);
    }
  }
  return handlers;
}

export interface GrpcServerOptions {
  /** What the HTTP API runs on: `app.agentloop` of `createGatewayApp` (run service, store, config, logger, API keys). */
  context: GrpcContext;
  /** Default: the context's logger. */
  logger?: Logger;
  /** Default: config HOST. */
  host?: string;
  /** Default: config GRPC_PORT; 0 binds any free port (see `port` on the result). */
  port?: number;
  /** How long `close` lets calls finish before cutting connections (default 5000 ms). */
  shutdownGraceMs?: number;
}

export interface GrpcServer {
  /** The port bound (useful with port 0). */
  port: number;
  /** Ends the calls in flight (UNAVAILABLE: re-join elsewhere), stops accepting calls, closes connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `agentloop.v1.AgentLoop` (api.proto) on `host:port`, on the same run service, store and API
 * keys as the HTTP API. Plaintext: terminate TLS at the ingress or mesh in front of it, as for HTTP.
 * Close it before the HTTP app (whose close stops the run service these calls use).
 */
export async function startGrpcServer(opts: GrpcServerOptions): Promise<GrpcServer> {
  const { context } = opts;
  const log = (opts.logger ?? context.logger).child({ component: 'grpc' });
  const stopping = new AbortController();
  // One combined signal per server (not per call): calls listen to it and detach when they end.
  const env: CallEnv = { ctx: { ...context, logger: opts.logger ?? context.logger }, closing: AbortSignal.any([context.runs.closingSignal, stopping.signal]) };
  const server = new grpc.Server({ 'grpc.max_receive_message_length': context.config.BODY_LIMIT_BYTES });
  server.addService(AGENTLOOP_GRPC_DEFINITION, grpcHandlers(env));
  const host = opts.host ?? context.config.HOST;
  const address = `${host.includes(':') ? `[${host}]` : host}:${opts.port ?? context.config.GRPC_PORT}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  log.info({ host, port }, 'gRPC API listening');
  let closed: Promise<void> | undefined;
  return {
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        stopping.abort();
        const force = setTimeout(() => server.forceShutdown(), opts.shutdownGraceMs ?? 5000);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          log.info('gRPC API stopped');
          resolve();
        });
      });
      return closed;
    },
  };
}
