import type * as grpc from '@grpc/grpc-js';
import type { DescMessage, DescMethod, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { AgentLoopService, create, fromBinary, toBinary } from '@agentloop/proto';

/** The RPCs of `agentloop.v1.AgentLoop` (api.proto), keyed by their lowerCamel local names. */
export type AgentLoopMethods = (typeof AgentLoopService)['method'];
export type AgentLoopMethodName = keyof AgentLoopMethods;
export type RequestOf<K extends AgentLoopMethodName> = MessageShape<AgentLoopMethods[K]['input']>;
/** What a caller may pass as the request: the message or a plain init object (`{ threadId }`). */
export type RequestInitOf<K extends AgentLoopMethodName> = MessageInitShape<AgentLoopMethods[K]['input']>;
export type ResponseOf<K extends AgentLoopMethodName> = MessageShape<AgentLoopMethods[K]['output']>;
export type ResponseInitOf<K extends AgentLoopMethodName> = MessageInitShape<AgentLoopMethods[K]['output']>;
export type UnaryMethodName = { [K in AgentLoopMethodName]: AgentLoopMethods[K]['methodKind'] extends 'unary' ? K : never }[AgentLoopMethodName];
export type ServerStreamingMethodName = {
  [K in AgentLoopMethodName]: AgentLoopMethods[K]['methodKind'] extends 'server_streaming' ? K : never;
}[AgentLoopMethodName];

/** `/agentloop.v1.AgentLoop/CreateThread`: the HTTP/2 path of an RPC. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Binary (de)serializers for one message type. Serializing accepts a plain init object as well as a
 * message (`create` returns a message of the right type unchanged), so clients can pass `{ threadId }`.
 */
function codec<D extends DescMessage>(desc: D) {
  return {
    serialize: (value: unknown): Buffer => Buffer.from(toBinary(desc, create(desc, value as MessageInitShape<D>))),
    deserialize: (bytes: Buffer): MessageShape<D> => fromBinary(desc, bytes),
  };
}

/**
 * The grpc-js service definition, built from the protobuf-es descriptor: the generated `_pb.ts` is
 * the only code generated from api.proto (no proto-loader, no grpc-tools). Keys are the RPCs' local
 * names (what `makeGenericClientConstructor` turns into client methods), paths their proto names.
 */
function buildDefinition(): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of AgentLoopService.methods) {
    const input = codec(method.input);
    const output = codec(method.output);
    def[method.localName] = {
      path: methodPath(method),
      originalName: method.name,
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: input.serialize,
      requestDeserialize: input.deserialize,
      responseSerialize: output.serialize,
      responseDeserialize: output.deserialize,
    };
  }
  return def;
}

/** `agentloop.v1.AgentLoop` for grpc-js (`server.addService`, `makeGenericClientConstructor`). */
export const AGENTLOOP_GRPC_DEFINITION: grpc.ServiceDefinition = buildDefinition();
