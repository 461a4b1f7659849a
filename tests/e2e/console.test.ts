/**
 * The ops console in a real browser (issue 16, "Done when"): headless Chromium driven by
 * playwright-core opens /console on an embedded AgentLoop, signs in with a tenant's key, sees a
 * scripted run that waits for approval of a secret write appear in the approvals inbox (live, over
 * the console's SSE feed), approves it, and sees the run finish; the inbox and the finished run's
 * timeline are saved as screenshots in tests/e2e/.artifacts/. The model that continues after the
 * approval is the deployment's own (a local fake OpenAI server), since a resume carries no script.
 *
 * Skipped, saying why, when no Chromium is installed (`.ci/run` installs Debian's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { poll, scripted, useEmbeddedServer } from './helpers.js';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';

const BROWSER = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
if (!BROWSER) console.warn('console.test.ts skipped: no Chromium found (set CHROMIUM_PATH, or apt-get install chromium; .ci/run does).');

const ARTIFACTS = path.join(import.meta.dirname, '.artifacts');
const KEY = 'console-e2e-key';
const SECRET_WRITE = { name: 'write_file', args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' } };

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe.skipIf(!BROWSER)('ops console in a browser (embedded)', () => {
  let fake: FakeOpenAi | undefined;
  // With API keys set the deployment counts as multi-tenant and turns the scripted model off unless told.
  const env: NodeJS.ProcessEnv = {
    AGENTLOOP_API_KEYS: `${KEY}:acme`,
    ALLOW_SCRIPTED_MODEL: 'true',
    MODEL_BASE_API_KEY: 'sk-fake',
    MODEL_BASE_ID: 'fake-model',
  };
  beforeAll(async () => {
    fake = await startFakeOpenAi({ respond: () => ({ answer: 'Saved the config.' }) });
    // The server's env is read when its beforeAll runs, after this one.
    env.MODEL_BASE_BASE_URL = fake.baseUrl;
  });
  afterAll(async () => {
    await fake?.close();
  });
  const server = useEmbeddedServer('agentloop-console-', env);
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: BROWSER, args: ['--no-sandbox', '--disable-background-networking'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  const api = async (p: string, body?: unknown) => {
    const res = await fetch(`${server.url}${p}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, p).toBeLessThan(300);
    return res.json() as Promise<Record<string, unknown>>;
  };

  it('shows a run waiting for approval in the inbox, approves it, and shows the run finished with its timeline', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const page: Page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    // GET /usage may be missing on this gateway (issue 17): its 404 is an answer the panel shows, not a problem.
    const expected = (url: string) => new URL(url).pathname === '/usage';
    page.on('console', (m) => m.type() === 'error' && !expected(m.location().url || 'http://x/') && problems.push(m.text()));
    page.on('response', (r) => r.status() >= 400 && !expected(r.url()) && problems.push(`${r.status()} ${r.url()}`));

    await page.goto(`${server.url}/console`);
    await page.fill('input[name=key]', KEY);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=inbox-empty]');
    await page.waitForSelector('.feed.live');

    // A scripted run whose only turn writes a secret: the approval rules stop it for a human.
    const thread = (await api('/threads', {})) as { thread_id: string };
    const first = (await api(`/threads/${thread.thread_id}/runs`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'save the config' }] },
      config: scripted([{ tool_calls: [SECRET_WRITE] }]),
    })) as { run_id: string };

    // It appears without a reload: the feed reports the run's end, the inbox reads the pending approvals.
    const card = page.locator(`[data-testid=approval][data-thread="${thread.thread_id}"]`);
    await card.waitFor();
    await expect(card.innerText()).resolves.toMatch(/write_file[\s\S]*critical[\s\S]*API_KEY=abc123/);
    await expect(page.locator('[data-testid=inbox-count]').innerText()).resolves.toBe('1');
    const inboxShot = path.join(ARTIFACTS, 'console-inbox.png');
    await page.screenshot({ path: inboxShot, fullPage: true });

    await card.locator('textarea').fill('dev key, fine');
    await card.locator('button', { hasText: 'Approve' }).click();
    await page.waitForSelector('[data-testid=inbox-empty]');

    // The resume ran the write and the model answered: the thread is idle, the runs list shows it.
    const done = await poll(async () => {
      const { runs } = (await api('/runs')) as { runs: Array<{ run_id: string; status: string }> };
      const resumed = runs.find((r) => r.run_id !== first.run_id);
      return resumed?.status === 'success' ? resumed : undefined;
    });
    const state = (await api(`/threads/${thread.thread_id}/state`)) as { values: { messages: Array<{ type: string; content: string }> } };
    expect(state.values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'Saved the config.' });

    await page.click('nav a[href="#/runs"]');
    const row = page.locator(`tr[data-run="${done.run_id}"]`);
    await row.locator('.status.success').waitFor();
    await row.locator('a').click();
    await page.locator('[data-testid=run-status]', { hasText: 'success' }).waitFor();
    const timeline = page.locator('[data-testid=timeline]');
    const text = await timeline.innerText();
    expect(text).toMatch(/write_file: approved/);
    expect(text).toMatch(/ended: success/);
    expect(await timeline.locator('[data-kind=tool_call]', { hasText: 'write_file' }).count()).toBe(1);
    expect(await timeline.locator('[data-kind=model_call]').count()).toBeGreaterThanOrEqual(1);
    const timelineShot = path.join(ARTIFACTS, 'console-timeline.png');
    await page.screenshot({ path: timelineShot, fullPage: true });

    // Usage: GET /usage (issue 17) per tenant, or the panel says the endpoint is missing on this gateway.
    await page.click('nav a[href="#/usage"]');
    await page.locator('[data-testid=usage-missing], [data-testid=usage-tenant]').first().waitFor();

    for (const shot of [inboxShot, timelineShot]) {
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      expect(pngSize(shot).width).toBe(1280);
    }
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
