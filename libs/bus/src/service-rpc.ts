/**
 * Service calls typed from the proto `service` definitions (issue 10). A binding (services.ts)
 * names, once, the NATS subject and default deadline of each RPC of a generated protobuf-es
 * service descriptor, and how its failures travel; from it both sides are derived:
 *
 * - `serviceClient(bus, ToolRunner).executeTool(req, { timeoutMs })`: encodes the request with the
 *   method's input schema, sets the tenant header from the request's `tenant_id`, waits for the
 *   method's deadline (or the caller's) and decodes the reply with its output schema;
 * - `serveService(bus, ToolRunner, { executeTool: async (req, ctx) => ... })`: decodes the request
 *   (bytes that are not the message are INVALID_ARGUMENT), checks the tenant (a body naming
 *   another tenant than the caller's header is PERMISSION_DENIED), calls the handler with the
 *   deadline's signal and encodes its answer.
 *
 * Error channel. A handler throws; what crosses the wire is transport-neutral: an AgentLoopError
 * keeps its code, message and retryable; anything else is logged here and crosses as INTERNAL
 * with a generic message (never the original text: it may name hosts, paths or secrets). Methods
 * whose reply has an `error` field (agentloop.v1.Error) answer with that field set (`errors:
 * 'field'`); the others with the bus's error header, which the client throws as a RemoteError.
 */
import { AgentLoopError, InvalidArgumentError, errorMessage, type ErrorCode, type Logger } from '@agentloop/core';
import {
  ErrorSchema,
  create,
  fromBinary,
  toBinary,
  type GenService,
  type GenServiceMethods,
  type MessageInitShape,
  type MessageShape,
  type WireError,
} from '@agentloop/proto';
import { Headers, type Bus, type BusMessage, type HandlerContext, type RequestHandler, type Subscription } from './types.js';

type Methods<S extends GenServiceMethods> = GenService<S>['method'];
/** The methods type argument of a generated descriptor: `ServiceShape<typeof ToolRunner>`. */
export type ServiceShape<T> = T extends GenService<infer S> ? S : never;
/** The RPC names (lowerCamel, as protobuf-es names them) of a service. */
export type MethodName<S extends GenServiceMethods> = keyof S & string;
export type RequestOf<S extends GenServiceMethods, K extends MethodName<S>> = MessageShape<S[K]['input']>;
export type RequestInitOf<S extends GenServiceMethods, K extends MethodName<S>> = MessageInitShape<S[K]['input']>;
export type ResponseOf<S extends GenServiceMethods, K extends MethodName<S>> = MessageShape<S[K]['output']>;
export type ResponseInitOf<S extends GenServiceMethods, K extends MethodName<S>> = MessageInitShape<S[K]['output']>;

/** How a method's failures reach the caller. */
export type ErrorChannel = 'header' | 'field';

export interface MethodSpec<S extends GenServiceMethods = GenServiceMethods, K extends MethodName<S> = MethodName<S>> {
  /** Last token(s) of the subject: `<prefix>.<name>`. */
  name: string;
  /** Default deadline of a call, in milliseconds; a caller may pass its own. */
  timeoutMs: number;
  /**
   * 'field': failures are answered in the reply's `error` field (the reply message must have one of
   * type agentloop.v1.Error); 'header' (default): in the bus's error header, thrown as a RemoteError.
   */
  errors?: ErrorChannel;
  /** With `errors: 'field'`: the other fields of a failure reply (e.g. a tool result's "Error: ..." content). */
  failure?: (error: WireError) => ResponseInitOf<S, K>;
  /** Safe to resend when the connection drops before the reply (see RequestOptions.idempotent). */
  idempotent?: boolean;
}

export interface ServiceSpec<S extends GenServiceMethods, K extends MethodName<S>> {
  /** Who serves it, in logs and in the generic INTERNAL message ("Internal error in the <label>"). */
  label: string;
  /** Queue group (and NATS micro-service name) of the servers. */
  queue: string;
  /** Subject prefix, e.g. `agentloop.tools`. */
  prefix: string;
  methods: { [M in K]: MethodSpec<S, M> };
  /** Whether an unexpected (INTERNAL) failure may be retried: true when the request itself was valid. Default false. */
  internalRetryable?: boolean;
}

export interface BoundMethod<S extends GenServiceMethods, K extends MethodName<S>> {
  rpc: Methods<S>[K];
  subject: string;
  timeoutMs: number;
  errors: ErrorChannel;
  failure: ((error: WireError) => ResponseInitOf<S, K>) | undefined;
  idempotent: boolean | undefined;
  /** The request message has a `tenant_id` field (checked against the tenant header). */
  tenantField: boolean;
}

/** One service's wire contract: what client and server are both derived from. */
export interface ServiceBinding<S extends GenServiceMethods, K extends MethodName<S> = MethodName<S>> {
  service: GenService<S>;
  label: string;
  queue: string;
  internalRetryable: boolean;
  methods: { readonly [M in K]: BoundMethod<S, M> };
}

/**
 * Declares the subjects, deadlines and error channel of a service's RPCs. Every RPC of the
 * descriptor must be bound unless the method names are given explicitly (`K`), for a server that
 * implements part of a service (a tool provider speaks ListTools and ExecuteTool only).
 */
export function defineService<S extends GenServiceMethods, K extends MethodName<S> = MethodName<S>>(
  service: GenService<S>,
  spec: ServiceSpec<S, NoInfer<K>>,
): ServiceBinding<S, K> {
  const methods = {} as Record<string, BoundMethod<S, MethodName<S>>>;
  for (const [name, m] of Object.entries(spec.methods) as Array<[K, MethodSpec<S, K>]>) {
    const rpc = (service.method as Methods<S>)[name];
    if (!rpc) throw new Error(`${service.typeName} has no RPC ${name}`);
    if (rpc.methodKind !== 'unary') throw new Error(`${service.typeName}.${rpc.name} is ${rpc.methodKind}: only unary RPCs go over the bus`);
    const errors = m.errors ?? 'header';
    if (errors === 'field' && !rpc.output.fields.some((f) => f.localName === 'error' && f.message?.typeName === ErrorSchema.typeName)) {
      throw new Error(`${service.typeName}.${rpc.name}: ${rpc.output.typeName} has no error field of type ${ErrorSchema.typeName}`);
    }
    methods[name] = {
      rpc,
      subject: `${spec.prefix}.${m.name}`,
      timeoutMs: m.timeoutMs,
      errors,
      failure: m.failure,
      idempotent: m.idempotent,
      tenantField: rpc.input.fields.some((f) => f.localName === 'tenantId' && f.fieldKind === 'scalar'),
    };
  }
  return {
    service,
    label: spec.label,
    queue: spec.queue,
    internalRetryable: spec.internalRetryable ?? false,
    methods: methods as unknown as ServiceBinding<S, K>['methods'],
  };
}

/** The subject of each bound RPC, by method name. */
export function subjectsOf<S extends GenServiceMethods, K extends MethodName<S>>(binding: ServiceBinding<S, K>): { readonly [M in K]: string } {
  return Object.fromEntries(Object.entries<BoundMethod<S, K>>(binding.methods).map(([k, m]) => [k, m.subject])) as { [M in K]: string };
}

// ——— client ———

export interface CallOptions {
  /** Deadline of this call; default the method's. An earlier deadline in `headers` still wins. */
  timeoutMs?: number;
  /** Tenant header; default the request's `tenant_id` when it has a non-empty one. */
  tenantId?: string;
  /** More headers (traceparent, idempotency key, deadline inherited from the caller's caller...). */
  headers?: Record<string, string>;
  /** Overrides the method's `idempotent`. */
  idempotent?: boolean;
}

export type ServiceClient<S extends GenServiceMethods, K extends MethodName<S> = MethodName<S>> = {
  readonly [M in K]: (request: RequestInitOf<S, M>, opts?: CallOptions) => Promise<ResponseOf<S, M>>;
};

/**
 * A typed client. Bus failures are thrown as the bus throws them (TimeoutError, UnavailableError,
 * RemoteError); a method with `errors: 'field'` returns its failure replies (check `error`).
 */
export function serviceClient<S extends GenServiceMethods, K extends MethodName<S>>(
  bus: Bus,
  target: ServiceBinding<S, K> | GenService<S>,
): ServiceClient<S, K> {
  const binding = bindingOf(target);
  const client = {} as Record<string, (request: unknown, opts?: CallOptions) => Promise<unknown>>;
  for (const [name, m] of Object.entries<BoundMethod<S, K>>(binding.methods)) {
    client[name] = async (request, opts = {}) => {
      const msg = create(m.rpc.input, request as MessageInitShape<S[K]['input']>);
      const bodyTenant = m.tenantField ? (msg as { tenantId?: unknown }).tenantId : undefined;
      const tenant = opts.tenantId ?? (typeof bodyTenant === 'string' && bodyTenant !== '' ? bodyTenant : undefined);
      const headers = { ...(tenant !== undefined ? { [Headers.tenant]: tenant } : {}), ...opts.headers };
      const idempotent = opts.idempotent ?? m.idempotent;
      const reply = await bus.request(m.subject, toBinary(m.rpc.input, msg), {
        timeoutMs: opts.timeoutMs ?? m.timeoutMs,
        headers,
        ...(idempotent !== undefined ? { idempotent } : {}),
      });
      return fromBinary(m.rpc.output, reply.data);
    };
  }
  return client as ServiceClient<S, K>;
}

// ——— server ———

export interface CallContext extends HandlerContext {
  /** The caller's tenant: the request's `tenant_id`, else the tenant header, else ''. */
  tenantId: string;
  /** The tenant header as sent, if any. */
  callerTenant: string | undefined;
  headers: Record<string, string>;
  subject: string;
}

export type MethodImpl<S extends GenServiceMethods, K extends MethodName<S>> = (
  request: RequestOf<S, K>,
  ctx: CallContext,
) => Promise<ResponseInitOf<S, K>> | ResponseInitOf<S, K>;

export type ServiceImpl<S extends GenServiceMethods, K extends MethodName<S> = MethodName<S>> = { [M in K]: MethodImpl<S, M> };

export interface ServeServiceOptions {
  logger: Logger;
  /** Default: the binding's queue group. */
  queue?: string;
  version?: string;
  description?: string;
  /** Applied to every error message sent (e.g. host paths → logical names). */
  redact?: (text: string) => string;
}

export const TENANT_MISMATCH_MESSAGE = 'Permission denied: the request names another tenant than its caller';

/**
 * The raw bus handler of one RPC: decode, tenant check, handler, encode, error channel. What
 * `serveService` serves; exported for tests that call a handler without a bus.
 */
export function rpcHandler<S extends GenServiceMethods, K extends MethodName<S>, M extends K>(
  target: ServiceBinding<S, K> | GenService<S>,
  method: M,
  impl: MethodImpl<S, M>,
  opts: Pick<ServeServiceOptions, 'logger' | 'redact'>,
): RequestHandler {
  const binding = bindingOf(target);
  const m = binding.methods[method] as BoundMethod<S, M>;
  const rpcName = `${binding.service.name}.${m.rpc.name}`;
  return async (msg: BusMessage, hctx: HandlerContext) => {
    try {
      let request: RequestOf<S, M>;
      try {
        request = fromBinary(m.rpc.input, msg.data) as RequestOf<S, M>;
      } catch (err) {
        throw new InvalidArgumentError(`Invalid ${m.rpc.input.name}: ${errorMessage(err)}`);
      }
      const callerTenant = msg.headers[Headers.tenant];
      const bodyTenant = m.tenantField ? String((request as { tenantId?: unknown }).tenantId ?? '') : '';
      if (bodyTenant && callerTenant && bodyTenant !== callerTenant) {
        opts.logger.warn({ rpc: rpcName, tenant: callerTenant, body_tenant: bodyTenant }, 'tenant header and request disagree');
        throw new AgentLoopError('PERMISSION_DENIED', TENANT_MISMATCH_MESSAGE);
      }
      const ctx: CallContext = { ...hctx, tenantId: bodyTenant || callerTenant || '', callerTenant, headers: msg.headers, subject: msg.subject };
      const response = await impl(request, ctx);
      return toBinary(m.rpc.output, create(m.rpc.output, response));
    } catch (err) {
      const wire = toServiceError(err, binding, rpcName, opts);
      if (m.errors === 'field') {
        const init = { ...(m.failure?.(wire) ?? {}), error: wire } as unknown as ResponseInitOf<S, M>;
        return toBinary(m.rpc.output, create(m.rpc.output, init));
      }
      throw new AgentLoopError(wire.code as ErrorCode, wire.message, { retryable: wire.retryable });
    }
  };
}

/**
 * What a thrown value becomes on the wire: an AgentLoopError as it is (message redacted), anything
 * else INTERNAL with a generic message, the original logged here.
 */
export function toServiceError(
  err: unknown,
  binding: Pick<ServiceBinding<GenServiceMethods, never>, 'label' | 'internalRetryable'>,
  rpcName: string,
  opts: Pick<ServeServiceOptions, 'logger' | 'redact'>,
): WireError {
  const redact = opts.redact ?? ((s: string) => s);
  if (err instanceof AgentLoopError) {
    const message = redact(err.message);
    opts.logger.info({ rpc: rpcName, code: err.code }, `${rpcName} refused: ${message}`);
    return create(ErrorSchema, { code: err.code, message, retryable: err.retryable });
  }
  opts.logger.error({ rpc: rpcName, err: redact(errorMessage(err)) }, `${rpcName} failed unexpectedly`);
  return create(ErrorSchema, { code: 'INTERNAL', message: `Internal error in the ${binding.label} (${rpcName})`, retryable: binding.internalRetryable });
}

/** Serves every bound RPC of a service; the returned subscription stops them all. */
export async function serveService<S extends GenServiceMethods, K extends MethodName<S>>(
  bus: Bus,
  target: ServiceBinding<S, K> | GenService<S>,
  impl: ServiceImpl<S, K>,
  opts: ServeServiceOptions,
): Promise<Subscription> {
  const binding = bindingOf(target);
  const serveOpts = {
    queue: opts.queue ?? binding.queue,
    ...(opts.version !== undefined ? { version: opts.version } : {}),
    ...(opts.description !== undefined ? { description: opts.description } : {}),
  };
  const subs: Subscription[] = [];
  const stop = async () => {
    await Promise.allSettled(subs.splice(0).map((s) => s.unsubscribe()));
  };
  try {
    for (const name of Object.keys(binding.methods) as K[]) {
      const method = binding.methods[name] as BoundMethod<S, K>;
      subs.push(await bus.serve(method.subject, serveOpts, rpcHandler(binding, name, impl[name], opts)));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { unsubscribe: stop };
}

// ——— default bindings ———

const defaults = new Map<unknown, ServiceBinding<GenServiceMethods, string>>();

/** Makes `binding` the one used when a caller names just the descriptor (`serviceClient(bus, ToolRunner)`). */
export function registerDefaultBinding<S extends GenServiceMethods>(binding: ServiceBinding<S>): ServiceBinding<S> {
  defaults.set(binding.service, binding as unknown as ServiceBinding<GenServiceMethods, string>);
  return binding;
}

function bindingOf<S extends GenServiceMethods, K extends MethodName<S>>(target: ServiceBinding<S, K> | GenService<S>): ServiceBinding<S, K> {
  if ('kind' in target && target.kind === 'service') {
    const found = defaults.get(target);
    if (!found) throw new Error(`No bus binding is declared for ${target.typeName} (libs/bus/src/services.ts)`);
    return found as unknown as ServiceBinding<S, K>;
  }
  return target as ServiceBinding<S, K>;
}
