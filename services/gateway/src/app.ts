import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AgentLoopError, jsonShapeExceeds, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, type Logger, type PathRoot } from '@agentloop/core';
import { context, extractTraceContext, instruments, SpanKind, SpanStatusCode, trace, tracer, tracingEnabled, type Span } from '@agentloop/telemetry';
import type { Bus, RunEventStream } from '@agentloop/bus';
import type { CronScheduler, JobQueue } from '@agentloop/queue';
import type { Store } from '@agentloop/store';
import { WorkspaceManager } from '@agentloop/workspace';
import { AdminAuthenticator, ADMIN_PATH_PREFIX } from './admin-auth.js';
import { ApiKeyAuthenticator } from './auth.js';
import type { GatewayConfig } from './config.js';
import type { RouteContext } from './context.js';
import { ApiError, RequestValidationError, statusOf, withTransientAsUnavailable } from './errors.js';
import { RunService } from './run-service.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerApprovalRoutes } from './routes/approvals.js';
import { MCP_OAUTH_CALLBACK_PATH, registerMcpOAuthRoutes } from './routes/mcp-oauth.js';
import { registerAssistantRoutes } from './routes/assistants.js';
import { registerFileRoutes } from './routes/files.js';
import { SkillsConfig } from './skills-config.js';
import { registerMetaRoutes } from './routes/meta.js';
import { registerRunRoutes } from './routes/runs.js';
import { registerThreadRoutes } from './routes/threads.js';
import { registerTelegram, TELEGRAM_WEBHOOK_PATH } from './telegram.js';
import { gatewayPathRedactor } from './redaction.js';
import type { ThreadCheckpoints } from './checkpoints.js';
import type { CheckpointRewinder } from './run-service/rollback.js';
// Store items (issue 12)
import { embeddingsFromEnv, OpenAiEmbeddings, StoreItems, TenantBudgets, type Embedder } from '@agentloop/store';
import { registerStoreRoutes, startStoreSweeper } from './routes/store.js';
import { StoreApi } from './store-api.js';
// Crons (issue 12)
import { CronService } from './cron-service.js';
import { registerCronRoutes } from './routes/crons.js';
import { registerUsageRoutes } from './routes/usage.js';
// Ops console (issue 16)
import { ConsoleFeed } from './console/live-feed.js';
import { registerConsoleApiRoutes } from './routes/console-api.js';
import { isConsoleAsset, registerConsoleStaticRoutes } from './routes/console-static.js';

/** What the HTTP API runs on. Every store call is scoped by the request's tenant. */
export interface GatewayDeps {
  store: Store;
  /** The `runs` queue the orchestrator consumes. */
  runs: JobQueue;
  events: RunEventStream;
  logger: Logger;
  config: GatewayConfig;
  /** The bus to the services the gateway asks directly (approval audit trail); without it those routes answer 503. */
  bus?: Bus;
  /** Redis for the rate-limit counters shared by every gateway replica (cluster); absent: in-process counters. */
  rateLimitRedis?: Redis;
  /** skills.yaml for upload hints; default: loaded from SKILLS_CONFIG. */
  skills?: SkillsConfig;
  /**
   * More host folders to redact from error text (e.g. SKILLS_ROOT → `skills`, DATA_DIR → `<data>`),
   * besides those the gateway knows (redaction.ts).
   */
  redactPaths?: readonly PathRoot[];
  /** The thread checkpoints (history, state at a checkpoint); absent: history is the latest state only. */
  checkpoints?: ThreadCheckpoints;
  /** Deletes the checkpoints of a rolled-back run (cancel with rollback); absent: rollback answers 501. */
  rewinder?: CheckpointRewinder;
  /** Store items (issue 12): the embeddings for semantic search; default: from STORE_EMBEDDINGS_* (none: text match). */
  embedder?: Embedder;
  /** Crons (issue 12): the scheduler whose ticks this gateway turns into runs; absent: cron endpoints answer 503. */
  scheduler?: CronScheduler;
}

/** Paths served without an API key (the Telegram webhook checks its own secret token). */
// The MCP OAuth callback: the user's browser carries no API key; the one-use state is the capability.
const PUBLIC_PATHS = new Set(['/ok', TELEGRAM_WEBHOOK_PATH, MCP_OAUTH_CALLBACK_PATH]);
/** `/ok`, the Telegram webhook, and the ops console's page and scripts (no data: the page asks for a key). */
const isPublicPath = (path: string): boolean => PUBLIC_PATHS.has(path) || isConsoleAsset(path);

/**
 * Builds the LangGraph Platform-compatible HTTP API (not listening yet).
 * Closing the app stops its background waits; the deps stay open (the caller owns them).
 */
export async function createGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'http' });
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; typing it as such keeps the app a plain FastifyInstance.
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Request lines are logged at debug level by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
  });

  // JSON bodies; an empty body counts as "no body" (curl -X POST without -d). Nesting is limited
  // (MAX_JSON_DEPTH, see libs/core json.ts) by a linear pre-scan before JSON.parse: a 10,000-deep
  // array would parse, then blow the stack of whatever walks it next (the store: a 500).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    const breach = jsonShapeExceeds(text, MAX_JSON_DEPTH, MAX_JSON_MEMBERS);
    if (breach === 'depth') {
      return done(
        new ApiError('MALFORMED_REQUEST', `Request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects (the limit); flatten it.`),
        undefined,
      );
    }
    if (breach === 'members') {
      // Refused before JSON.parse: building a huge object is itself the cost (libs/core json.ts).
      return done(
        new ApiError(
          'MALFORMED_REQUEST',
          `Request body has an object or array with more than ${MAX_JSON_MEMBERS} members (the limit); send large data as a file upload.`,
        ),
        undefined,
      );
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new ApiError('MALFORMED_REQUEST', `Request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });

  app.decorateRequest('tenantId', '');
  const spans = new WeakMap<FastifyRequest, { span: Span; started: number }>();
  /** Start times of requests without a span (tracing off). */
  const started = new WeakMap<FastifyRequest, number>();

  if (config.CORS_ORIGINS.length > 0) installCors(app, config.CORS_ORIGINS);

  const auth = new ApiKeyAuthenticator(config.AGENTLOOP_API_KEYS, config.AGENTLOOP_ADMIN_KEYS);
  const adminAuth = new AdminAuthenticator(auth);
  // A callback hook, not an async one: no promise and no extra turn per request.
  app.addHook('onRequest', (request, _reply, done) => {
    const q = request.url.indexOf('?');
    const path = q === -1 ? request.url : request.url.slice(0, q);
    if (request.method === 'OPTIONS' || isPublicPath(path)) return done();
    try {
      // The operator API: operator keys only (AGENTLOOP_ADMIN_KEYS, admin-auth.ts).
      if (path.startsWith(ADMIN_PATH_PREFIX)) adminAuth.authorize(request.headers);
      const caller = auth.identify(request.headers);
      request.tenantId = caller.tenant;
      request.apiKeyId = caller.keyId;
      request.isAdmin = caller.admin;
    } catch (err) {
      return done(err as Error);
    }
    done();
  });

  // Each request is a SERVER span (continuing the client's `traceparent`), active for the rest of its
  // lifecycle so the runs it enqueues carry its trace context to the orchestrator.
  app.addHook('onRequest', (request, _reply, done) => {
    // Tracing off: no span, no context switch, only the start time the duration metric needs.
    if (!tracingEnabled()) {
      started.set(request, performance.now());
      return done();
    }
    const parent = extractTraceContext(request.headers as Record<string, string | undefined>);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer().startSpan(
      `${request.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0] ?? '' } },
      parent,
    );
    spans.set(request, { span, started: performance.now() });
    context.with(trace.setSpan(parent, span), done);
  });

  if (config.RATE_LIMIT_MAX > 0) {
    // Per tenant (after authentication), so one tenant cannot starve the others; /ok is exempt.
    await app.register(rateLimit, {
      hook: 'preHandler',
      max: (request) => config.TENANT_RATE_LIMITS.get(request.tenantId) ?? config.RATE_LIMIT_MAX,
      timeWindow: config.RATE_LIMIT_WINDOW_MS,
      keyGenerator: (request) => `tenant:${request.tenantId || request.ip}`,
      allowList: (request) => isPublicPath(request.url),
      nameSpace: 'agentloop-ratelimit:',
      skipOnError: true,
      ...(deps.rateLimitRedis ? { redis: deps.rateLimitRedis } : {}),
      errorResponseBuilder: (request, ctx) =>
        new ApiError(
          'RESOURCE_EXHAUSTED',
          `Rate limit exceeded for tenant ${request.tenantId || 'anonymous'}: at most ${ctx.max} requests per ${Math.round(ctx.ttl / 1000) || 1} s window; retry after ${ctx.after}.`,
        ),
    });
  }

  app.addHook('onResponse', (request, reply, done) => {
    // The access log; its line is built only when debug lines are written.
    if (logger.isLevelEnabled('debug')) {
      request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, tenant: request.tenantId || undefined }, 'request');
    }
    const attrs = {
      'http.request.method': request.method,
      'http.route': request.routeOptions.url ?? 'unmatched',
      'http.response.status_code': reply.statusCode,
    };
    const start = started.get(request);
    if (start !== undefined) {
      instruments().httpRequestDuration.record((performance.now() - start) / 1000, attrs);
      return done();
    }
    const entry = spans.get(request);
    if (!entry) return done();
    spans.delete(request);
    entry.span.setAttributes(attrs);
    if (request.tenantId) entry.span.setAttribute('agentloop.tenant', request.tenantId);
    if (reply.statusCode >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
    entry.span.end();
    instruments().httpRequestDuration.record((performance.now() - entry.started) / 1000, attrs);
    done();
  });

  // Error text may carry a host path some layer let through (a file system error, a service's
  // message): every detail is redacted here, the last point before the client (the log keeps it all).
  const redactor = gatewayPathRedactor(config, deps.redactPaths);
  const redact = (text: string): string => redactor.redact(text);
  app.setErrorHandler((thrown: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const err = withTransientAsUnavailable(thrown);
    const status = statusOf(err);
    const known = err instanceof AgentLoopError || (status < 500 && err instanceof Error);
    const detail = known ? redact((err as Error).message) : 'Internal server error.';
    if (status >= 500) request.log.error({ err, method: request.method, url: request.url }, 'request failed');
    else request.log.debug({ status, detail }, 'request rejected');
    const body: Record<string, unknown> = { detail };
    if (err instanceof RequestValidationError) body.errors = err.issues.map((i) => ({ path: i.path, message: redact(i.message) }));
    if (status === 401) void reply.header('www-authenticate', 'Bearer');
    if (err instanceof ApiError) {
      if (err.extra) Object.assign(body, err.extra, { detail });
      if (err.retryAfterS !== undefined) void reply.header('retry-after', String(err.retryAfterS));
    }
    return reply.status(status).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send({ detail: `Not found: ${request.method} ${request.url.split('?')[0]}` });
  });

  const skills = deps.skills ?? (await SkillsConfig.load(config.SKILLS_CONFIG));
  const workspaces = new WorkspaceManager({ root: config.WORKSPACE_ROOT, logger: deps.logger.child({ component: 'workspaces' }) });
  // Token budgets (issue 17): fresh ledger reads at admission and in GET /usage, hence no cache.
  const budgets = new TenantBudgets(deps.store, config, { cacheMs: 0 });
  const runs = new RunService({
    budgets,
    store: deps.store,
    runs: deps.runs,
    events: deps.events,
    logger: deps.logger,
    config,
    skills,
    ...(deps.bus ? { bus: deps.bus } : {}),
    ...(deps.rewinder ? { rewinder: deps.rewinder } : {}),
    ...(deps.checkpoints ? { checkpoints: deps.checkpoints } : {}),
  });
  const ctx: RouteContext = {
    store: deps.store,
    runs,
    config,
    logger: deps.logger,
    workspaces,
    skills,
    redact,
    ...(deps.checkpoints ? { checkpoints: deps.checkpoints } : {}),
  };
  // Store items and crons (issue 12): one instance each, served by the HTTP routes and the gRPC API alike.
  const embeddings = embeddingsFromEnv(config);
  const embedder = deps.embedder ?? (embeddings ? new OpenAiEmbeddings(embeddings) : undefined);
  const storeApi = new StoreApi(new StoreItems({ store: deps.store, ...(embedder ? { embedder } : {}) }));
  // The gateway runs the scheduler's worker, since a firing is an admission.
  const crons = new CronService({ store: deps.store, runs, logger: deps.logger, scheduler: deps.scheduler, allowSeconds: config.CRON_ALLOW_SECONDS });
  app.decorate('agentloop', { ...ctx, auth, storeApi, crons });
  registerMetaRoutes(app);
  registerAssistantRoutes(app, ctx);
  registerThreadRoutes(app, ctx);
  registerRunRoutes(app, ctx);
  await registerFileRoutes(app, ctx);
  registerApprovalRoutes(app, deps.bus);
  registerAdminRoutes(app, deps.bus);
  // OAuth of remote MCP servers per tenant (issue 14)
  registerMcpOAuthRoutes(app, deps.bus, config.PUBLIC_BASE_URL);
  // The Telegram channel (issue 13), when TELEGRAM_BOT_TOKEN is set.
  registerTelegram(app, config, auth, deps.logger);
  // Store items (issue 12)
  registerStoreRoutes(app, storeApi);
  const stopSweeper = startStoreSweeper(deps.store, config.STORE_SWEEP_INTERVAL_MS, logger.child({ component: 'store-sweeper' }));
  app.addHook('onClose', async () => stopSweeper());
  // Crons (issue 12)
  registerCronRoutes(app, crons);
  // Usage and budgets (issue 17)
  registerUsageRoutes(app, { store: deps.store, budgets, config });
  // Ops console (issue 16)
  const consoleFeed = new ConsoleFeed({ store: deps.store, logger: deps.logger });
  registerConsoleApiRoutes(app, ctx, { events: deps.events, queue: deps.runs, feed: consoleFeed });
  registerConsoleStaticRoutes(app);
  app.addHook('onClose', async () => consoleFeed.stop());
  app.addHook('onReady', async () => {
    await crons.start();
  });

  // Before the server drains: end waits and SSE streams (clients rejoin elsewhere), stop deferred work.
  app.addHook('preClose', async () => {
    await crons.stop();
    runs.stop();
  });
  app.addHook('onClose', async () => {
    await runs.close();
  });
  return app;
}

/** Minimal CORS for browser clients (LangChain's agent-chat-ui). */
function installCors(app: FastifyInstance, origins: readonly string[]): void {
  const any = origins.includes('*');
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined || (!any && !origins.includes(origin))) return;
    void reply.header('access-control-allow-origin', any ? '*' : origin);
    void reply.header('vary', 'Origin');
    void reply.header('access-control-expose-headers', 'content-location, location, x-pagination-next');
    if (request.method === 'OPTIONS') {
      const reqHeaders = request.headers['access-control-request-headers'];
      void reply
        .header('access-control-allow-methods', 'GET, POST, PATCH, DELETE, OPTIONS')
        .header('access-control-allow-headers', reqHeaders ?? 'content-type, x-api-key, authorization, last-event-id')
        .header('access-control-max-age', '600');
      return reply.code(204).send();
    }
  });
}
