import * as grpc from '@grpc/grpc-js';
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import { AgentLoopError, errorMessage, newId, type Logger } from '@agentloop/core';
import {
  AgentLoopService,
  RunInfoSchema,
  RunResultSchema,
  RunStreamEventSchema,
  ThreadInfoSchema,
  DeleteThreadResponseSchema,
  create,
  fromBinary,
  toBinary,
  type CreateRunRequest,
  type RunInfo,
  type ThreadInfo,
} from '@agentloop/proto';
import type { JsonObject, RunRecord, ThreadRecord } from '@agentloop/store';
import type { ApiKeyAuthenticator } from './auth.js';
import type { RouteContext } from './context.js';
import { HttpError, conflict, invalid, notFound, statusOf } from './errors.js';
import { RunCreateBody, wantsEvent } from './run-schema.js';
import { parseRequest, Uuid } from './validation.js';

/** What the gRPC API shares with the HTTP API: the same run service, store and authentication. */
export interface GrpcContext extends RouteContext {
  auth: ApiKeyAuthenticator;
}

export interface GrpcServer {
  /** The port bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

const STATUS_BY_HTTP: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  408: grpc.status.DEADLINE_EXCEEDED,
  409: grpc.status.FAILED_PRECONDITION,
  413: grpc.status.RESOURCE_EXHAUSTED,
  415: grpc.status.INVALID_ARGUMENT,
  422: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
};

/** Any error → a gRPC status with a message safe to show (internals are not leaked). */
function toServiceError(err: unknown, logger: Logger): Partial<grpc.ServiceError> {
  const http = statusOf(err);
  const code = STATUS_BY_HTTP[http] ?? (http < 500 ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL);
  const known = err instanceof AgentLoopError || (http < 500 && err instanceof Error);
  if (!known) logger.error({ err: errorMessage(err) }, 'grpc call failed');
  return { code, details: known ? (err as Error).message : 'Internal server error.' };
}

const json = (v: unknown): string => (v === undefined || v === null ? '' : JSON.stringify(v));

function parseJsonField(text: string, field: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(field, `is not valid JSON: ${errorMessage(err)}`);
  }
}

function threadInfo(t: ThreadRecord): ThreadInfo {
  return create(ThreadInfoSchema, {
    threadId: t.threadId,
    status: t.status,
    metadataJson: json(t.metadata),
    valuesJson: json(t.values),
    createdAtMs: BigInt(t.createdAt.getTime()),
    updatedAtMs: BigInt(t.updatedAt.getTime()),
  });
}

function runInfo(r: RunRecord): RunInfo {
  return create(RunInfoSchema, {
    runId: r.runId,
    threadId: r.threadId,
    assistantId: r.assistantId,
    status: r.status,
    metadataJson: json(r.metadata),
    createdAtMs: BigInt(r.createdAt.getTime()),
    updatedAtMs: BigInt(r.updatedAt.getTime()),
  });
}

/** The HTTP body a CreateRunRequest stands for, validated by the same schema as HTTP. */
function runBody(req: CreateRunRequest): RunCreateBody {
  const body: Record<string, unknown> = {
    assistant_id: req.assistantId || 'agent',
    ...(req.inputJson ? { input: parseJsonField(req.inputJson, 'input_json') } : {}),
    ...(req.commandJson ? { command: parseJsonField(req.commandJson, 'command_json') } : {}),
    ...(req.configJson ? { config: parseJsonField(req.configJson, 'config_json') } : {}),
    ...(req.metadataJson ? { metadata: parseJsonField(req.metadataJson, 'metadata_json') } : {}),
    ...(req.webhook ? { webhook: req.webhook } : {}),
    ...(req.multitaskStrategy ? { multitask_strategy: req.multitaskStrategy } : {}),
    ...(req.streamMode.length > 0 ? { stream_mode: req.streamMode } : {}),
    ...(req.ifNotExistsCreate ? { if_not_exists: 'create' } : {}),
  };
  return parseRequest(RunCreateBody, body, 'body');
}

type Call = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

/** Metadata → the header bag the HTTP authenticator reads. */
function tenantOf(ctx: GrpcContext, call: Call): string {
  const headers: Record<string, string> = {};
  for (const name of ['x-api-key', 'authorization']) {
    const v = call.metadata.get(name)[0];
    if (typeof v === 'string') headers[name] = v;
  }
  return ctx.auth.authenticate(headers);
}

/** Aborted when the client cancels, the deadline passes, RUN_WAIT_MAX_MS passes or the gateway stops. */
function callSignal(ctx: GrpcContext, call: Call): AbortSignal {
  const ac = new AbortController();
  call.on('cancelled', () => ac.abort());
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() - Date.now() : Number.isFinite(deadline) ? Number(deadline) - Date.now() : Infinity;
  const cap = Math.min(ms, ctx.config.RUN_WAIT_MAX_MS);
  const signals = [ac.signal, ctx.runs.closingSignal];
  if (Number.isFinite(cap)) signals.push(AbortSignal.timeout(Math.max(1, cap)));
  return AbortSignal.any(signals);
}

function unary<Req extends DescMessage, Res extends DescMessage>(
  ctx: GrpcContext,
  fn: (req: MessageShape<Req>, tenant: string, call: grpc.ServerUnaryCall<MessageShape<Req>, MessageShape<Res>>) => Promise<MessageShape<Res>>,
): grpc.handleUnaryCall<MessageShape<Req>, MessageShape<Res>> {
  return (call, callback) => {
    (async () => fn(call.request, tenantOf(ctx, call), call))().then(
      (res) => callback(null, res),
      (err: unknown) => callback(toServiceError(err, ctx.logger) as grpc.ServiceError),
    );
  };
}

function streaming<Req extends DescMessage, Res extends DescMessage>(
  ctx: GrpcContext,
  fn: (req: MessageShape<Req>, tenant: string, call: grpc.ServerWritableStream<MessageShape<Req>, MessageShape<Res>>) => Promise<void>,
): grpc.handleServerStreamingCall<MessageShape<Req>, MessageShape<Res>> {
  return (call) => {
    (async () => fn(call.request, tenantOf(ctx, call), call))().then(
      () => call.end(),
      (err: unknown) => call.destroy(Object.assign(new Error((toServiceError(err, ctx.logger).details as string) ?? 'error'), toServiceError(err, ctx.logger))),
    );
  };
}

async function requireThread(ctx: GrpcContext, tenant: string, threadId: string): Promise<ThreadRecord> {
  const t = await ctx.store.getThread(tenant, threadId);
  if (!t) throw notFound(`Thread ${threadId} not found.`);
  return t;
}

async function requireRun(ctx: GrpcContext, tenant: string, threadId: string, runId: string): Promise<RunRecord> {
  const r = await ctx.store.getRun(tenant, runId);
  if (!r || r.threadId !== threadId) throw notFound(`Run ${runId} not found on thread ${threadId}.`);
  return r;
}

/** Streams a run's events (after `afterId`) to the call until `end` or cancellation. */
async function pipeEvents(ctx: GrpcContext, tenant: string, run: RunRecord, afterId: number, modes: string[], call: grpc.ServerWritableStream<unknown, unknown>): Promise<boolean> {
  const signal = callSignal(ctx, call);
  let ended = false;
  for await (const ev of ctx.runs.events(tenant, run.runId, afterId, signal)) {
    if (ev.event === 'end') ended = true;
    if (wantsEvent(ev.event, modes)) call.write(create(RunStreamEventSchema, { id: BigInt(ev.id), event: ev.event, dataJson: ev.dataJson }));
    if (call.cancelled) break;
  }
  return ended;
}

/** Builds the grpc-js service definition from the protobuf-es descriptor (no second code generator). */
function serviceDefinition(): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of AgentLoopService.methods) {
    const input = method.input;
    const output = method.output;
    def[method.localName] = {
      path: `/${AgentLoopService.typeName}/${method.name}`,
      requestStream: false,
      responseStream: method.methodKind === 'server_streaming',
      // Clients may pass plain objects: `create` turns an init object into the message (and keeps a message as is).
      requestSerialize: (m: unknown) => Buffer.from(toBinary(input, create(input, m as MessageShape<typeof input>))),
      requestDeserialize: (b: Buffer) => fromBinary(input, b),
      responseSerialize: (m: unknown) => Buffer.from(toBinary(output, create(output, m as MessageShape<typeof output>))),
      responseDeserialize: (b: Buffer) => fromBinary(output, b),
    };
  }
  return def;
}

export const AGENTLOOP_GRPC_DEFINITION = serviceDefinition();

/**
 * The gRPC API (api.proto) on `host:port`, sharing the HTTP API's run service, store and API keys.
 * Plaintext: terminate TLS at the ingress or mesh in front of it.
 */
export async function startGrpcServer(opts: { context: GrpcContext; host: string; port: number; logger: Logger }): Promise<GrpcServer> {
  const ctx = opts.context;
  const log = opts.logger.child({ component: 'grpc' });
  const server = new grpc.Server({ 'grpc.max_receive_message_length': ctx.config.BODY_LIMIT_BYTES });
  type M = (typeof AgentLoopService)['method'];
  type In<K extends keyof M> = M[K]['input'];
  type Out<K extends keyof M> = M[K]['output'];

  const handlers: grpc.UntypedServiceImplementation = {
    createThread: unary<In<'createThread'>, Out<'createThread'>>(ctx, async (req, tenant) => {
      const threadId = req.threadId || newId();
      if (req.threadId) {
        if (!Uuid.safeParse(req.threadId).success) throw invalid('thread_id', 'expected a UUID');
        const existing = await ctx.store.getThread(tenant, threadId);
        if (existing) {
          if (req.ifExistsDoNothing) return threadInfo(existing);
          throw conflict(`Thread ${threadId} already exists. Set if_exists_do_nothing to get the existing thread instead.`);
        }
      }
      const metadata = (parseJsonField(req.metadataJson, 'metadata_json') ?? {}) as JsonObject;
      if (typeof metadata !== 'object' || Array.isArray(metadata)) throw invalid('metadata_json', 'must be a JSON object');
      return threadInfo(await ctx.store.createThread({ threadId, tenantId: tenant, metadata }));
    }),
    getThread: unary<In<'getThread'>, Out<'getThread'>>(ctx, async (req, tenant) => threadInfo(await requireThread(ctx, tenant, req.threadId))),
    deleteThread: unary<In<'deleteThread'>, Out<'deleteThread'>>(ctx, async (req, tenant) => {
      await requireThread(ctx, tenant, req.threadId);
      await ctx.runs.purgeThreadEvents(tenant, req.threadId);
      if (!(await ctx.store.deleteThread(tenant, req.threadId))) throw notFound(`Thread ${req.threadId} not found.`);
      return create(DeleteThreadResponseSchema, {});
    }),
    createRun: unary<In<'createRun'>, Out<'createRun'>>(ctx, async (req, tenant) => {
      const created = await ctx.runs.create(tenant, req.threadId || undefined, runBody(req));
      if (created.deleteOnCompletion) ctx.runs.cleanupWhenDone(tenant, created.run);
      log.info({ run_id: created.run.runId, tenant }, 'run created (grpc)');
      return runInfo(created.run);
    }),
    waitRun: unary<In<'waitRun'>, Out<'waitRun'>>(ctx, async (req, tenant, call) => {
      const created = await ctx.runs.create(tenant, req.threadId || undefined, runBody(req));
      const result = await ctx.runs.waitForEnd(tenant, created.run.runId, callSignal(ctx, call));
      if (result.kind !== 'finished') {
        if (created.deleteOnCompletion) ctx.runs.cleanupWhenDone(tenant, created.run);
        if (result.kind === 'missing') throw notFound(`Run ${created.run.runId} no longer exists (its thread was deleted).`);
        throw new HttpError(504, 'TIMEOUT', `Run ${created.run.runId} has not finished within the call's deadline; join it with JoinRun.`);
      }
      const values = await ctx.runs.waitBody(tenant, result);
      if (created.deleteOnCompletion) await ctx.runs.deleteStateless(tenant, created.run);
      const { __error__, ...rest } = values as JsonObject & { __error__?: unknown };
      return create(RunResultSchema, { run: runInfo(result.run), valuesJson: json(__error__ === undefined ? values : rest), errorJson: json(__error__ ?? result.error) });
    }),
    streamRun: streaming<In<'streamRun'>, Out<'streamRun'>>(ctx, async (req, tenant, call) => {
      const created = await ctx.runs.create(tenant, req.threadId || undefined, runBody(req));
      call.write(create(RunStreamEventSchema, { id: 0n, event: 'metadata', dataJson: JSON.stringify({ run_id: created.run.runId, thread_id: created.run.threadId }) }));
      const ended = await pipeEvents(ctx, tenant, created.run, 0, created.streamModes, call as grpc.ServerWritableStream<unknown, unknown>);
      if (created.deleteOnCompletion) {
        if (ended) await ctx.runs.deleteStateless(tenant, created.run);
        else ctx.runs.cleanupWhenDone(tenant, created.run);
      }
    }),
    joinRun: streaming<In<'joinRun'>, Out<'joinRun'>>(ctx, async (req, tenant, call) => {
      const run = await requireRun(ctx, tenant, req.threadId, req.runId);
      const modes = req.streamMode.length > 0 ? req.streamMode : ['values'];
      await pipeEvents(ctx, tenant, run, Number(req.afterEventId), modes, call as grpc.ServerWritableStream<unknown, unknown>);
    }),
    getRun: unary<In<'getRun'>, Out<'getRun'>>(ctx, async (req, tenant) => runInfo(await requireRun(ctx, tenant, req.threadId, req.runId))),
    cancelRun: unary<In<'cancelRun'>, Out<'cancelRun'>>(ctx, async (req, tenant) => {
      const after = await ctx.runs.cancel(tenant, await requireRun(ctx, tenant, req.threadId, req.runId));
      if (after.status !== 'interrupted') throw conflict(`Run ${req.runId} already finished with status ${after.status}; there is nothing to cancel.`);
      return runInfo(after);
    }),
  };
  server.addService(AGENTLOOP_GRPC_DEFINITION, handlers);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  log.info({ port }, 'gRPC API listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // Streams in flight end when the run service stops; then stop for good.
        const force = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** A client for the gRPC API (tests, users): `new AgentLoopGrpcClient(address, credentials)`. */
export const AgentLoopGrpcClient = grpc.makeGenericClientConstructor(AGENTLOOP_GRPC_DEFINITION, 'AgentLoop');
