import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '@langchain/langgraph-sdk';
import { TelegramBot } from '@agentloop/channel';
import { ConfigError, errorMessage, type Logger } from '@agentloop/core';
import { DEFAULT_TENANT, type ApiKeyAuthenticator } from './auth.js';
import type { GatewayConfig } from './config.js';
import { ApiError, UnauthenticatedError } from './errors.js';

/** Where Telegram pushes updates in webhook mode (no API key: the secret token authenticates it). */
export const TELEGRAM_WEBHOOK_PATH = '/channels/telegram/webhook';

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Compares the presented secret with the configured one in constant time (digests of equal length). */
function secretMatches(presented: string | string[] | undefined, secret: string): boolean {
  const value = Array.isArray(presented) ? presented[0] : presented;
  return value !== undefined && timingSafeEqual(sha256(value), sha256(secret));
}

function parseRunConfig(raw: string | undefined): Config | Config[] | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    const isObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v);
    if (Array.isArray(parsed) ? parsed.length > 0 && parsed.every(isObject) : isObject(parsed)) return parsed as Config | Config[];
  } catch {
    // reported below
  }
  throw new ConfigError('Invalid configuration:\n  TELEGRAM_RUN_CONFIG: expected a JSON object, or a non-empty array of objects (one per run)');
}

/** Boot-time checks: a bad combination stops the gateway with a message naming the variable. */
function checkConfig(config: GatewayConfig, auth: ApiKeyAuthenticator): void {
  const problems: string[] = [];
  if (config.TELEGRAM_MODE === 'webhook' && !config.TELEGRAM_WEBHOOK_SECRET) {
    problems.push('TELEGRAM_WEBHOOK_SECRET: required with TELEGRAM_MODE=webhook (Telegram sends it with every update; the route refuses updates without it)');
  }
  if (auth.enabled) {
    const tenant = config.TELEGRAM_API_KEY ? auth.lookup(config.TELEGRAM_API_KEY) : undefined;
    if (!tenant) problems.push('TELEGRAM_API_KEY: required, and one of AGENTLOOP_API_KEYS, when API keys are on (its tenant owns the chats)');
    else if (config.TELEGRAM_TENANT && config.TELEGRAM_TENANT !== tenant) {
      problems.push(`TELEGRAM_TENANT: "${config.TELEGRAM_TENANT}" is not the tenant of TELEGRAM_API_KEY ("${tenant}")`);
    }
  } else if (config.TELEGRAM_TENANT && config.TELEGRAM_TENANT !== DEFAULT_TENANT) {
    problems.push(`TELEGRAM_TENANT: without AGENTLOOP_API_KEYS every request is tenant "${DEFAULT_TENANT}"`);
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
}

/**
 * Runs the Telegram channel (issue 13, seed 003) inside the gateway when TELEGRAM_BOT_TOKEN is set.
 * The bot is a client of this gateway's own HTTP API on loopback (with TELEGRAM_API_KEY), so its
 * chats get exactly what any API client gets, tenant isolation included. It starts once the server
 * listens (it needs the address) and stops before the server closes.
 */
export function registerTelegram(app: FastifyInstance, config: GatewayConfig, auth: ApiKeyAuthenticator, logger: Logger): void {
  const token = config.TELEGRAM_BOT_TOKEN;
  if (!token) return;
  checkConfig(config, auth);
  const runConfig = parseRunConfig(config.TELEGRAM_RUN_CONFIG);
  const log = logger.child({ component: 'telegram' });
  let bot: TelegramBot | undefined;

  if (config.TELEGRAM_MODE === 'webhook') {
    const secret = config.TELEGRAM_WEBHOOK_SECRET!;
    // The secret is checked on arrival, before the body is even parsed: a wrong one learns nothing else.
    const onRequest = async (request: FastifyRequest): Promise<void> => {
      if (secretMatches(request.headers['x-telegram-bot-api-secret-token'], secret)) return;
      log.warn({ ip: request.ip }, 'telegram webhook: wrong or missing secret token');
      throw new UnauthenticatedError('Wrong or missing X-Telegram-Bot-Api-Secret-Token.');
    };
    app.post(TELEGRAM_WEBHOOK_PATH, { onRequest }, async (request, reply) => {
      const update = request.body as { update_id?: unknown } | undefined;
      if (!update || typeof update.update_id !== 'number') throw new ApiError('MALFORMED_REQUEST', 'Expected a Telegram Update with a numeric update_id.');
      if (!bot)
        throw new ApiError(
          'UNAVAILABLE',
          'The Telegram channel is not running (starting, or it failed to start: see the log); Telegram will deliver the update again.',
        );
      await bot.handleUpdate(update as Parameters<TelegramBot['handleUpdate']>[0]);
      return reply.code(200).send({ ok: true });
    });
  }

  app.addHook('onListen', async () => {
    const address = app.server.address() as AddressInfo;
    const host = ['0.0.0.0', '::', ''].includes(address.address) ? '127.0.0.1' : address.address;
    const apiUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    const next = new TelegramBot({
      token,
      apiRoot: config.TELEGRAM_API_ROOT,
      server: { apiUrl, ...(config.TELEGRAM_API_KEY ? { apiKey: config.TELEGRAM_API_KEY } : {}) },
      assistantId: config.TELEGRAM_ASSISTANT,
      ...(runConfig ? { runConfig } : {}),
      allowedChats: config.TELEGRAM_ALLOWED_CHATS,
      logger: log,
    });
    try {
      await next.init();
      if (config.TELEGRAM_MODE === 'polling') next.startPolling();
      else if (config.TELEGRAM_WEBHOOK_URL) await next.setWebhook(`${config.TELEGRAM_WEBHOOK_URL}${TELEGRAM_WEBHOOK_PATH}`, config.TELEGRAM_WEBHOOK_SECRET!);
      bot = next;
      if (!config.TELEGRAM_ALLOWED_CHATS.length) log.warn('TELEGRAM_ALLOWED_CHATS is not set: anyone who finds the bot can use this tenant');
    } catch (err) {
      // The API stays up without its Telegram channel; the log says why.
      log.error({ err: errorMessage(err) }, 'the Telegram channel did not start');
    }
  });
  app.addHook('preClose', async () => {
    await bot?.stop();
  });
}
