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
