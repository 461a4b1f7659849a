/**
 * Attack class 8 — defaults when API keys are set (issue 18: with keys, embedded mode still let
 * any tenant drive tools through the scripted model and make the server POST to loopback ports).
 *
 * Two servers: one with API keys and nothing else (the defaults under test), and one with
 * ALLOW_SCRIPTED_MODEL and WEBHOOK_ALLOW set explicitly (the control: an operator can opt in).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  API_KEYS,
  ATTACK_ENV,
  KEY_A,
  TENANT_A,
  call,
  newThread,
  poll,
  runWait,
  scripted,
  sleep,
  spawnServer,
  userInput,
  type ServerChild,
  type Values,
} from './harness.js';

/** A loopback receiver that counts every request it gets. */
async function receiver() {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { port, hits: () => hits, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let bare: ServerChild;
let explicit: ServerChild;
let hook: Awaited<ReturnType<typeof receiver>>;

beforeAll(async () => {
  hook = await receiver();
  [bare, explicit] = await Promise.all([
    // Only the keys: ALLOW_SCRIPTED_MODEL and WEBHOOK_ALLOW are not in the environment at all.
    spawnServer({ env: { AGENTLOOP_API_KEYS: API_KEYS } }),
    spawnServer({ env: ATTACK_ENV }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([bare?.stop(5_000), explicit?.stop(5_000)]);
  bare?.cleanup();
  explicit?.cleanup();
  await hook?.close();
});

const writeTurns = [
  { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/driven.txt', content: 'the tenant chose this call' } }] },
  { content: 'done' },
];

describe('with API keys and no opt-in', () => {
  it('refuses the scripted model with an error naming ALLOW_SCRIPTED_MODEL, and runs no tool', async () => {
    const thread = await newThread(bare.url, KEY_A);
    const res = await runWait(bare.url, KEY_A, thread, writeTurns);
    const refusedUpFront = res.status >= 400 && res.status < 500;
    const failedRun = res.status === 200 && (res.json as Values).__error__ !== undefined;
    expect(refusedUpFront || failedRun, `HTTP ${res.status}: ${res.text.slice(0, 300)}`).toBe(true);
    expect(res.text).toMatch(/ALLOW_SCRIPTED_MODEL|scripted/);
    expect(existsSync(path.join(bare.workspaceRoot, TENANT_A, thread, 'outputs', 'driven.txt'))).toBe(false);
  });

  it.each(['127.0.0.1', 'localhost', '[::1]', '127.1', '0x7f000001'])(
    'refuses a webhook to http://%s:<port> with 422 naming webhook, and never calls it',
    async (host) => {
      const thread = await newThread(bare.url, KEY_A);
      const res = await call(bare.url, KEY_A, 'POST', `/threads/${thread}/runs`, {
        assistant_id: 'agent',
        input: userInput('x'),
        webhook: `http://${host}:${hook.port}/hook`,
      });
      expect(res.status, res.text).toBe(422);
      expect(res.text).toMatch(/webhook/i);
      await sleep(300);
      expect(hook.hits()).toBe(0);
    },
  );
});

describe('with API keys and an explicit opt-in (the control)', () => {
  it('runs the scripted model when ALLOW_SCRIPTED_MODEL=true is set', async () => {
    const thread = await newThread(explicit.url, KEY_A);
    const res = await runWait(explicit.url, KEY_A, thread, writeTurns);
    expect(res.status).toBe(200);
    expect((res.json as Values).__error__).toBeUndefined();
    expect(existsSync(path.join(explicit.workspaceRoot, TENANT_A, thread, 'outputs', 'driven.txt'))).toBe(true);
  });

  it('delivers a webhook to 127.0.0.1 when WEBHOOK_ALLOW lists it', async () => {
    const before = hook.hits();
    const thread = await newThread(explicit.url, KEY_A);
    const res = await call(explicit.url, KEY_A, 'POST', `/threads/${thread}/runs`, {
      assistant_id: 'agent',
      input: userInput('x'),
      config: scripted([{ content: 'done' }]),
      webhook: `http://127.0.0.1:${hook.port}/hook`,
    });
    expect(res.status, res.text).toBe(200);
    expect(await poll(async () => (hook.hits() > before ? true : undefined), 10_000)).toBe(true);
  });
});
