import { z } from 'zod';
import { envBaseUrl, envBool, envInt, envOptionalInt, envTenantNumbers, parseConfig, TokenBudgetEnv, TransportEnv } from '@agentloop/core';
import { MAX_WEIGHT } from '@agentloop/queue';
import { envAllowList } from '@agentloop/net';
import { embeddingsFromEnv } from '@agentloop/store';

/**
 * `AGENTLOOP_API_KEYS="key1:tenantA,key2:tenantB"` → Map(key → tenant).
 * Unset or empty: auth is off and every request belongs to tenant "default".
 */
const ApiKeys = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const keys = new Map<string, string>();
    if (raw === undefined || raw.trim() === '') return keys;
    for (const entry of raw.split(',')) {
      const item = entry.trim();
      if (item === '') continue;
      const sep = item.lastIndexOf(':');
      const key = sep > 0 ? item.slice(0, sep).trim() : '';
      const tenant = sep > 0 ? item.slice(sep + 1).trim() : '';
      if (key === '' || tenant === '') {
        ctx.addIssue({ code: 'custom', message: 'expected "key:tenant" pairs separated by commas (e.g. "k1:acme,k2:globex")' });
        return z.NEVER;
      }
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(tenant)) {
        ctx.addIssue({ code: 'custom', message: `tenant "${tenant}" must be 1-64 characters of letters, digits, "_", "." or "-"` });
        return z.NEVER;
      }
      if (keys.has(key)) {
        ctx.addIssue({ code: 'custom', message: 'the same API key is listed twice' });
        return z.NEVER;
      }
      keys.set(key, tenant);
    }
    return keys;
  });

/** `CORS_ORIGINS="*"` or a comma-separated list of origins; unset: no CORS headers. */
const CorsOrigins = z
  .string()
  .optional()
  .transform((raw) =>
    raw === undefined || raw.trim() === ''
      ? []
      : raw
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
  );

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** `acme=5000,globex=100` → Map(tenant → number). */
const tenantNumbers = (variable: string) => envTenantNumbers(variable, 0, 999_999_999, 'number');

export const GatewayConfig = TransportEnv.extend({
  PORT: envInt(2024, 0, 65535),
  HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AGENTLOOP_API_KEYS: ApiKeys,
  /**
   * Ops console (issue 16): operator keys, `key:tenant` pairs like AGENTLOOP_API_KEYS. Such a key
   * acts as its tenant on every route; on the console's reads (`GET /runs`, `/approvals/pending`,
   * `/queue/stats`, `/console/events`, `/runs/{id}/timeline`) and `GET /usage` it sees every tenant,
   * and it alone opens the operator API (`/admin/*`, e.g. the cluster reload).
   */
  AGENTLOOP_ADMIN_KEYS: ApiKeys,
  CORS_ORIGINS: CorsOrigins,
  /** SQLite file for the record store when MYSQL_URL is not set (single-process use). */
  SQLITE_PATH: z.string().min(1).default('agentloop.db'),
  /** Thread workspaces (`<root>/<tenant>/<thread>/`), the volume the tool-runner and indexer use too. */
  WORKSPACE_ROOT: z.string().min(1).default('./data/workspaces'),
  /** Largest file accepted by `POST /threads/{id}/files` (default 100 MiB). */
  UPLOAD_MAX_FILE_BYTES: envInt(100 * 1024 * 1024, 1, 64 * 1024 * 1024 * 1024),
  /** Most files in one upload request. */
  UPLOAD_MAX_FILES: envInt(20, 1, 1000),
  /**
   * Public base URL of the API (e.g. https://agents.example.com), used to make
   * artifact download URLs absolute in webhooks; unset: URLs are relative paths.
   */
  PUBLIC_BASE_URL: envBaseUrl(),
  /** skills.yaml (seed 000 §3.3); upload hints come from its `auto_load_on_file_types`. Unset: config/skills.yaml of this package. */
  SKILLS_CONFIG: z.string().min(1).optional(),
  /** Language of the file references added to a message (seed 001 §3.3): en or zh. */
  PROMPT_LANGUAGE: z.enum(['en', 'zh']).default('en'),
  /**
   * Requests per tenant per RATE_LIMIT_WINDOW_MS (429 beyond, with Retry-After), counted in Redis
   * across gateway replicas in a cluster. 0 (the default) disables; k8s/base/config.yaml sets 1200.
   */
  RATE_LIMIT_MAX: envInt(0, 0, 10_000_000),
  RATE_LIMIT_WINDOW_MS: envInt(60_000, 1000, 24 * 60 * 60 * 1000),
  /**
   * Bytes of run events kept for re-joining streams, all runs together (oldest dropped first).
   * Unset: 64 MiB in memory (embedded), 1 GiB in the JetStream stream. The gateway and the
   * orchestrators must agree: both create the stream.
   */
  RUN_EVENTS_MAX_BYTES: envOptionalInt(1024 * 1024, 1024 ** 4),
  /** Runs a tenant may have pending or running at once (429 beyond); 0 = unlimited. */
  TENANT_MAX_ACTIVE_RUNS: envInt(0, 0, 1_000_000),
  /** Per-tenant overrides of TENANT_MAX_ACTIVE_RUNS: `acme=200,globex=10`. */
  TENANT_RUN_QUOTAS: tenantNumbers('TENANT_RUN_QUOTAS'),
  /**
   * Fair scheduling (docs/adr/0008-fair-scheduling.md): each tenant's share of the orchestrators
   * while several have runs queued, `acme=3,globex=1` (1..100, default 1). The orchestrators must
   * be given the same.
   */
  TENANT_WEIGHTS: envTenantNumbers('TENANT_WEIGHTS', 1, MAX_WEIGHT),
  /** Per-tenant overrides of RATE_LIMIT_MAX: `acme=5000,globex=100`. */
  TENANT_RATE_LIMITS: tenantNumbers('TENANT_RATE_LIMITS'),
  /** Tenants' daily and monthly token budgets (issue 17): 429 at admission once used up. */
  ...TokenBudgetEnv.shape,
  /** The gRPC API (api.proto): port (0 = any free port) and switch. */
  GRPC_PORT: envInt(50051, 0, 65535),
  GRPC_ENABLED: envBool(true),
  /** Largest accepted request body. */
  BODY_LIMIT_BYTES: envInt(10 * 1024 * 1024, 1024, 512 * 1024 * 1024),
  /** Server-side cap on /wait, /join and SSE streams. */
  RUN_WAIT_MAX_MS: envInt(60 * 60 * 1000, 1, 24 * 60 * 60 * 1000),
  /** Attempts and backoff base of the `runs` jobs the gateway enqueues. */
  RUN_ATTEMPTS: envInt(3, 1, 100),
  RUN_BACKOFF_MS: envInt(1000, 0, 10 * 60 * 1000),
  /** SSE keep-alive comment interval (0 disables). */
  SSE_HEARTBEAT_MS: envInt(15_000, 0, 10 * 60 * 1000),
  /**
   * When a client joins a run that has already finished, the gateway replays the
   * run's event log; if the log has been trimmed the replay never sees `end`, so
   * the stream is closed after this much silence.
   */
  SSE_REPLAY_IDLE_MS: envInt(1000, 1, 60_000),
  /** Standard Webhooks signing secret (`whsec_<base64>` or any string); unset: deliveries are unsigned. */
  WEBHOOK_SECRET: optionalString,
  WEBHOOK_TIMEOUT_MS: envInt(10_000, 1, 10 * 60 * 1000),
  WEBHOOK_CONCURRENCY: envInt(4, 1, 256),
  /**
   * Exceptions to the webhook SSRF guard, same syntax as HTTP_FETCH_ALLOW (`cidr|ip|[ipv6]|host`, each
   * with an optional `:port`). Webhooks reach public addresses only unless listed here. Embedded mode
   * defaults to loopback (a laptop's own receiver).
   */
  WEBHOOK_ALLOW: envAllowList('WEBHOOK_ALLOW'),
  // Store items (issue 12)
  /** Semantic search of `/store/items/search`: an OpenAI-compatible embeddings endpoint (libs/store embeddings.ts); unset model: text match. */
  STORE_EMBEDDINGS_MODEL: optionalString,
  STORE_EMBEDDINGS_BASE_URL: optionalString,
  STORE_EMBEDDINGS_API_KEY: optionalString,
  STORE_EMBEDDINGS_DIMS: optionalString,
  /** How often expired store items are deleted (they are invisible from their expiry on); 0 disables. */
  STORE_SWEEP_INTERVAL_MS: envInt(60_000, 0, 24 * 60 * 60 * 1000),
  /** Crons (issue 12): accept a 6-field schedule with leading seconds. For tests only; the API is 5-field. */
  CRON_ALLOW_SECONDS: envBool(false),
  // Telegram channel (issue 13): run by the gateway when a bot token is set (telegram.ts).
  TELEGRAM_BOT_TOKEN: optionalString,
  /** `polling` (getUpdates; one gateway replica only) or `webhook` (POST /channels/telegram/webhook, any replica). */
  TELEGRAM_MODE: z.enum(['polling', 'webhook']).default('polling'),
  /** Webhook mode: the secret Telegram sends in X-Telegram-Bot-Api-Secret-Token (1-256 of A-Z a-z 0-9 _ -). */
  TELEGRAM_WEBHOOK_SECRET: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,256}$/, 'expected 1-256 characters of A-Z, a-z, 0-9, _ and -')
      .optional(),
  ),
  /** Webhook mode: the public URL of the webhook route; when set, the gateway registers it with Telegram at boot. */
  TELEGRAM_WEBHOOK_URL: envBaseUrl(),
  /** Bot API root (tests point it at a fake). */
  TELEGRAM_API_ROOT: z.string().url().default('https://api.telegram.org'),
  /** The API key the bot uses on this gateway: its tenant owns the chats' threads. Unset: only when auth is off. */
  TELEGRAM_API_KEY: optionalString,
  /** The tenant the chats belong to; checked against TELEGRAM_API_KEY at boot. */
  TELEGRAM_TENANT: optionalString,
  TELEGRAM_ASSISTANT: z.string().min(1).default('agent'),
  /** Chat ids the bot serves, comma-separated; unset: every chat that finds the bot. */
  TELEGRAM_ALLOWED_CHATS: z
    .string()
    .optional()
    .transform((raw) =>
      (raw ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  /** Advanced/testing: JSON run config of every Telegram run, or an array used by successive runs (scripted models). */
  TELEGRAM_RUN_CONFIG: optionalString,
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

/** Parses the gateway configuration from the environment; throws a ConfigError naming every bad variable. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = parseConfig(GatewayConfig, env);
  embeddingsFromEnv(config); // a bad STORE_EMBEDDINGS_* value stops the process at boot
  for (const key of config.AGENTLOOP_ADMIN_KEYS.keys()) {
    // One key, one role: a key listed twice would be an admin or not depending on which list wins.
    if (config.AGENTLOOP_API_KEYS.has(key))
      throw new Error('Invalid configuration: AGENTLOOP_ADMIN_KEYS: a key is also listed in AGENTLOOP_API_KEYS; list it once.');
  }
  return config;
}
