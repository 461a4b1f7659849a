import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import { ApiKeyAuthenticator } from './auth.js';
import { loadGatewayConfig } from './config.js';
import { registerTelegram, TELEGRAM_WEBHOOK_PATH } from './telegram.js';

const TOKEN = '123:TEST-not-a-real-token';
const keys = new ApiKeyAuthenticator(new Map([['acme-key', 'acme']]));
const noKeys = new ApiKeyAuthenticator(new Map());
const register = (env: Record<string, string>, auth = noKeys) => {
  const app = Fastify();
  registerTelegram(app, loadGatewayConfig({ TELEGRAM_BOT_TOKEN: TOKEN, ...env }), auth, silentLogger());
  return app;
};

describe('Telegram configuration', () => {
  it('stops the gateway with a message naming the variable when the combination is wrong', () => {
    expect(() => register({ TELEGRAM_MODE: 'webhook' })).toThrow(/TELEGRAM_WEBHOOK_SECRET: required with TELEGRAM_MODE=webhook/);
    expect(() => register({}, keys)).toThrow(/TELEGRAM_API_KEY: required/);
    expect(() => register({ TELEGRAM_API_KEY: 'acme-key', TELEGRAM_TENANT: 'globex' }, keys)).toThrow(
      /TELEGRAM_TENANT: "globex" is not the tenant of TELEGRAM_API_KEY \("acme"\)/,
    );
    expect(() => register({ TELEGRAM_RUN_CONFIG: '[]' })).toThrow(/TELEGRAM_RUN_CONFIG/);
    expect(() => loadGatewayConfig({ TELEGRAM_WEBHOOK_SECRET: 'has spaces' })).toThrow(/TELEGRAM_WEBHOOK_SECRET/);
    expect(() => register({ TELEGRAM_API_KEY: 'acme-key', TELEGRAM_TENANT: 'acme' }, keys)).not.toThrow();
  });
});

describe('the webhook route', () => {
  const app = register({ TELEGRAM_MODE: 'webhook', TELEGRAM_WEBHOOK_SECRET: 'right-secret' });
  const post = (headers: Record<string, string>, payload: unknown = { update_id: 1 }) =>
    app.inject({ method: 'POST', url: TELEGRAM_WEBHOOK_PATH, headers, payload: payload as object });

  it('refuses a wrong or missing secret token with 401 before looking at the update', async () => {
    expect((await post({ 'x-telegram-bot-api-secret-token': 'wrong-secret' }, 'not even json')).statusCode).toBe(401);
    expect((await post({})).statusCode).toBe(401);
  });

  it('with the right secret: a malformed update is 400, and 503 while the bot is not started', async () => {
    expect((await post({ 'x-telegram-bot-api-secret-token': 'right-secret' }, { hello: 1 })).statusCode).toBe(400);
    expect((await post({ 'x-telegram-bot-api-secret-token': 'right-secret' })).statusCode).toBe(503);
  });
});
