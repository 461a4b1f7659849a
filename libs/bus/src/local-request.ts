/**
 * Service calls handed over in-process as protobuf messages instead of their bytes (issue 9). A
 * call over the MemoryBus used to encode its request, copy the bytes, decode them in the handler,
 * and the same again for the reply: ~0.3 ms of every embedded run's main-thread CPU went to
 * protobuf for calls that never leave the process. The bytes were only the means of the bus's
 * isolation guarantee (contract.ts: "copies payloads so neither side shares memory with the
 * other"); a deep copy of the message (protobuf-es `clone`: declared fields only, each value
 * checked against its field's type as encoding would) keeps it at a fifth of the cost.
 *
 * Who copies what, so that no two parties share memory, as with bytes:
 * - the request: the bus, when it is sent (as it copied the bytes), one copy per handler;
 * - the reply: the handler (service-rpc.ts), before it leaves the handler's turn — the
 *   implementation may hold parts of what it answered (a cached tool list).
 * A handler without a LocalHandler gets the bytes and its reply is decoded, so both ends can
 * still meet on the wire form.
 */
import { clone, fromBinary, toBinary, type DescMessage, type MessageShape } from '@agentloop/proto';
import type { BusMessage, HandlerContext, RequestHandler, RequestOptions } from './types.js';

export interface LocalMessage {
  schema: DescMessage;
  message: MessageShape<DescMessage>;
}

/**
 * Answers a request given as a message only it holds; `msg` carries the subject and headers (its
 * `data` is empty). Resolves with a reply message nobody else holds, or throws as a
 * RequestHandler does (the bus sends the error header either way).
 */
export type LocalHandler = (request: LocalMessage, msg: BusMessage, ctx: HandlerContext) => Promise<LocalMessage>;

const LOCAL = Symbol('agentloop.bus.localHandler');

/** `handler` that also answers requests handed over as messages. */
export function withLocalHandler(handler: RequestHandler, local: LocalHandler): RequestHandler {
  return Object.assign(handler, { [LOCAL]: local });
}

export function localHandlerOf(handler: RequestHandler): LocalHandler | undefined {
  return (handler as { [LOCAL]?: LocalHandler })[LOCAL];
}

/** A bus that can hand a request over as a message (MemoryBus; ThreadBus for its own thread's servers). */
export interface LocalRequester {
  requestLocal(subject: string, request: LocalMessage, reply: DescMessage, opts: RequestOptions): Promise<MessageShape<DescMessage>>;
}

export function canRequestLocal(bus: object): bus is LocalRequester {
  return typeof (bus as Partial<LocalRequester>).requestLocal === 'function';
}

/** The payload of a request to `handler`, taken when the request is sent: a copy of the message, or its bytes. */
export function payloadFor(handler: RequestHandler, request: LocalMessage): { local: LocalHandler; request: LocalMessage } | { bytes: Uint8Array } {
  const local = localHandlerOf(handler);
  return local
    ? { local, request: { schema: request.schema, message: copyMessage(request.schema, request.message) } }
    : { bytes: toBinary(request.schema, request.message) };
}

/**
 * A deep copy of `message`. `clone` refuses a field value of the wrong type (a number in a string
 * field) that encoding converts; such a message is copied through its bytes, so that a call that
 * worked over the wire works in-process too.
 */
export function copyMessage(schema: DescMessage, message: MessageShape<DescMessage>): MessageShape<DescMessage> {
  try {
    return clone(schema, message);
  } catch {
    return fromBinary(schema, toBinary(schema, message));
  }
}

/** A reply as a message of type `reply` (a LocalHandler of another type's answer goes through its bytes). */
export function replyAs(reply: DescMessage, answer: LocalMessage | Uint8Array): MessageShape<DescMessage> {
  if (answer instanceof Uint8Array) return fromBinary(reply, answer);
  return answer.schema.typeName === reply.typeName ? answer.message : fromBinary(reply, toBinary(answer.schema, answer.message));
}

/** The empty `data` of the BusMessage a LocalHandler gets. */
export const NO_BYTES = new Uint8Array(0);
