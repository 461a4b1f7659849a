import * as grpc from '@grpc/grpc-js';
import { AgentLoopService } from '@agentloop/proto';
import { AGENTLOOP_GRPC_DEFINITION, type RequestInitOf, type ResponseOf, type ServerStreamingMethodName, type UnaryMethodName } from './definition.js';

/**
 * The untyped grpc-js client class of the AgentLoop service (`new AgentLoopGrpcClient(address,
 * credentials)`, methods `client.createThread(request, metadata, callback)`...). Prefer
 * `createAgentLoopGrpcClient`, which types requests and responses and returns promises.
 */
export const AgentLoopGrpcClient = grpc.makeGenericClientConstructor(AGENTLOOP_GRPC_DEFINITION, 'AgentLoop');

export interface AgentLoopClientOptions {
  /** Sent as `x-api-key` on every call (unless a call sets its own). */
  apiKey?: string;
  /** Default: plaintext (`grpc.credentials.createInsecure()`). */
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

export interface AgentLoopCallOptions {
  /** Overrides the client's key for this call ('' sends none, e.g. to authenticate with `authorization` metadata instead). */
  apiKey?: string;
  /** Extra metadata (e.g. `traceparent`). */
  metadata?: grpc.Metadata | Record<string, string>;
  /** The call's deadline; `timeoutMs` is the same relative to now. */
  deadline?: Date | number;
  timeoutMs?: number;
  /** Cancels the call (CANCELLED) when it aborts. */
  signal?: AbortSignal;
}

/** A unary RPC resolves with the response message and rejects with the grpc-js `ServiceError` (`code`, `details`). */
type UnaryMethods = { [K in UnaryMethodName]: (request: RequestInitOf<K>, options?: AgentLoopCallOptions) => Promise<ResponseOf<K>> };
/** A server-streaming RPC is a readable of messages: `for await (const ev of client.streamRun(...))`; `.cancel()` stops it. */
type StreamingMethods = {
  [K in ServerStreamingMethodName]: (request: RequestInitOf<K>, options?: AgentLoopCallOptions) => grpc.ClientReadableStream<ResponseOf<K>>;
};

export type AgentLoopClient = UnaryMethods &
  StreamingMethods & {
    /** The grpc-js client underneath. */
    readonly raw: grpc.Client;
    /** Resolves once the channel is connected (rejects after the deadline). */
    waitForReady(deadline: Date | number): Promise<void>;
    close(): void;
  };

/**
 * A typed client of the gateway's gRPC API (api.proto): one method per RPC, requests as plain init
 * objects or messages. A thin wrapper over the grpc-js generic client built from the same
 * service definition the server uses.
 */
export function createAgentLoopGrpcClient(address: string, opts: AgentLoopClientOptions = {}): AgentLoopClient {
  const raw = new AgentLoopGrpcClient(address, opts.credentials ?? grpc.credentials.createInsecure(), opts.channelOptions ?? {});

  const metadataOf = (o: AgentLoopCallOptions): grpc.Metadata => {
    const md = o.metadata instanceof grpc.Metadata ? o.metadata.clone() : new grpc.Metadata();
    if (o.metadata && !(o.metadata instanceof grpc.Metadata)) for (const [k, v] of Object.entries(o.metadata)) md.set(k, v);
    const key = o.apiKey ?? opts.apiKey;
    if (key && md.get('x-api-key').length === 0) md.set('x-api-key', key);
    return md;
  };
  const callOptionsOf = (o: AgentLoopCallOptions): grpc.CallOptions => {
    const deadline = o.deadline ?? (o.timeoutMs === undefined ? undefined : Date.now() + o.timeoutMs);
    return deadline === undefined ? {} : { deadline };
  };
  /** Cancels `call` when the signal aborts; returns the detach function. */
  const bindSignal = (call: { cancel(): void }, signal: AbortSignal | undefined): (() => void) => {
    if (!signal) return () => undefined;
    const onAbort = () => call.cancel();
    if (signal.aborted) queueMicrotask(onAbort);
    else signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  };

  const client: Record<string, unknown> = {
    raw,
    close: () => raw.close(),
    waitForReady: (deadline: Date | number) => new Promise<void>((resolve, reject) => raw.waitForReady(deadline, (err) => (err ? reject(err) : resolve()))),
  };
  for (const method of AgentLoopService.methods) {
    const def = AGENTLOOP_GRPC_DEFINITION[method.localName];
    if (!def) continue;
    if (method.methodKind === 'unary') {
      client[method.localName] = (request: unknown, o: AgentLoopCallOptions = {}) =>
        new Promise((resolve, reject) => {
          let detach = () => undefined as void;
          const call = raw.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, request, metadataOf(o), callOptionsOf(o), (err, res) => {
            detach();
            if (err) reject(err);
            else resolve(res);
          });
          detach = bindSignal(call, o.signal);
        });
    } else if (method.methodKind === 'server_streaming') {
      client[method.localName] = (request: unknown, o: AgentLoopCallOptions = {}) => {
        const call = raw.makeServerStreamRequest(def.path, def.requestSerialize, def.responseDeserialize, request, metadataOf(o), callOptionsOf(o));
        const detach = bindSignal(call, o.signal);
        call.once('close', detach);
        return call;
      };
    }
  }
  return client as AgentLoopClient;
}
