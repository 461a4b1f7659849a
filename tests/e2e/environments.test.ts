/**
 * Environments (seed 002: "a named set of skills, models and agents", reloaded when switching),
 * embedded and in a cluster with two orchestrators: two environments of one skills.yaml give a
 * run a different model, different sub-agents, different skills and their own system prompt,
 * as the OpenAI-compatible endpoint sees the requests; an edited skills.yaml is in force for the
 * next run after POST /admin/reload, on every replica, without a restart.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { useCluster, useEmbeddedServer } from './helpers.js';
import { startFakeOpenAi } from './fake-openai.js';

const TENANT_KEY = 'env-tenant-key';
const ADMIN_KEY = 'env-admin-key';

const SKILLS_YAML = `
environments:
  legal:
    skills: [contracts]
    models: { base: legal-model }
    agents: [researcher]
    system_prompt: You serve the legal team.
  dev:
    skills: [snippets]
    models: { base: { id: dev-model, temperature: 0 } }
    agents: [reviewer]
`;

const fake = await startFakeOpenAi({ respond: () => ({ answer: 'ok' }) });

/** A skills folder with one skill per environment, and its skills.yaml. */
function fixture(prefix: string) {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  const skills = path.join(root, 'skills');
  for (const id of ['contracts', 'snippets']) {
    mkdirSync(path.join(skills, id), { recursive: true });
    writeFileSync(path.join(skills, id, 'SKILL.md'), `---\nname: ${id}\ndescription: The ${id} skill.\n---\n# ${id}\n`);
  }
  const config = path.join(root, 'skills.yaml');
  writeFileSync(config, SKILLS_YAML);
  return {
    root,
    config,
    env: {
      SKILLS_ROOT: skills,
      SKILLS_CONFIG: config,
      AGENTLOOP_API_KEYS: `${TENANT_KEY}:acme`,
      AGENTLOOP_ADMIN_KEYS: `${ADMIN_KEY}:ops`,
      MODEL_BASE_API_KEY: 'sk-fake',
      MODEL_BASE_BASE_URL: fake.baseUrl,
      MODEL_BASE_ID: 'global-model',
    },
  };
}

afterAll(() => fake.close());

interface SeenRequest {
  model: string;
  system: string;
  tools: string[];
}

/** Runs one message in an environment (none: undefined); what the model endpoint was sent. */
async function runIn(url: string, environment: string | undefined, text: string): Promise<SeenRequest> {
  const client = new Client({ apiUrl: url, apiKey: TENANT_KEY });
  const thread = await client.threads.create();
  const from = fake.requests.length;
  const run = await client.runs.create(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: text }] },
    ...(environment ? { config: { configurable: { environment } } } : {}),
  });
  await client.runs.join(thread.thread_id, run.run_id);
  const done = await client.runs.get(thread.thread_id, run.run_id);
  expect(done.status).toBe('success');
  // The fake serves every test of the file: this run's request is the one naming its text.
  const body = fake.requests.slice(from).find((r) => JSON.stringify(r.messages).includes(text));
  expect(body).toBeDefined();
  const messages = body!.messages as Array<{ role: string; content: unknown }>;
  return {
    model: String(body!.model),
    system: String(messages.find((m) => m.role === 'system')?.content ?? ''),
    tools: ((body!.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name),
  };
}

async function reload(url: string): Promise<void> {
  const res = await fetch(`${url}/admin/reload`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': ADMIN_KEY },
    body: JSON.stringify({ reason: 'e2e environments', wait_ms: 3000 }),
  });
  const body = (await res.json()) as { ok?: boolean; services?: Array<{ service: string; ok: boolean }> };
  expect(res.status).toBe(200);
  expect(body.services?.filter((s) => s.service === 'skill-sandbox').every((s) => s.ok)).toBe(true);
}

function environmentTests(url: () => string, config: string, orchestrators: number) {
  it('two environments give a run their own model, sub-agents, skills and system prompt', { timeout: 120_000 }, async () => {
    const legal = await runIn(url(), 'legal', '@researcher summarise the lease (legal)');
    expect(legal.model).toBe('legal-model');
    expect(legal.tools).toContain('delegate_task');
    expect(legal.system).toContain('You serve the legal team.');
    expect(legal.system).toContain('skills/contracts/SKILL.md');
    expect(legal.system).not.toContain('skills/snippets/SKILL.md');

    // Switching environment is the next run naming another one: the same @mention is no agent there.
    const dev = await runIn(url(), 'dev', '@researcher summarise the lease (dev)');
    expect(dev.model).toBe('dev-model');
    expect(dev.tools).not.toContain('delegate_task');
    expect(dev.system).not.toContain('legal team');
    expect(dev.system).toContain('skills/snippets/SKILL.md');
    expect(dev.system).not.toContain('skills/contracts/SKILL.md');
    expect((await runIn(url(), 'dev', '@reviewer look at this diff (dev)')).tools).toContain('delegate_task');

    const none = await runIn(url(), undefined, 'hello without an environment');
    expect(none.model).toBe('global-model');
  });

  it('an unknown environment fails the run naming the configured ones', { timeout: 60_000 }, async () => {
    const client = new Client({ apiUrl: url(), apiKey: TENANT_KEY });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
      config: { configurable: { environment: 'finance' } },
    });
    // /join answers like LangGraph's: the failure as {__error__: {error, message}}.
    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as { __error__?: { message?: string } };
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('error');
    const detail = joined.__error__?.message ?? '';
    expect(detail).toContain('Unknown environment: finance');
    expect(detail).toContain('dev, legal');
  });

  it('an edited environment is in force for the next run after POST /admin/reload, without a restart', { timeout: 120_000 }, async () => {
    writeFileSync(
      config,
      SKILLS_YAML.replace('models: { base: legal-model }', 'models: { base: legal-model-v2 }').replace('agents: [researcher]', 'agents: [paralegal]'),
    );
    await reload(url());
    // Whichever orchestrator replica takes a run reads the edited environment: a few runs, each checked.
    for (let i = 0; i <= orchestrators; i++) {
      const legal = await runIn(url(), 'legal', `@researcher check clause ${i} (after reload)`);
      expect(legal.model).toBe('legal-model-v2');
      expect(legal.tools).not.toContain('delegate_task');
    }
    expect((await runIn(url(), 'legal', '@paralegal file it (after reload)')).tools).toContain('delegate_task');
  });
}

describe('environments: skills, models and agents per environment (embedded)', () => {
  const f = fixture('agentloop-environments-');
  const server = useEmbeddedServer('agentloop-environments-data-', f.env);
  afterAll(() => rmSync(f.root, { recursive: true, force: true }));
  environmentTests(() => server.url, f.config, 1);
});

describe('environments: skills, models and agents per environment (cluster, two orchestrators)', () => {
  const f = fixture('agentloop-environments-cluster-');
  const cluster = useCluster({ env: f.env, orchestrators: 2 });
  afterAll(() => rmSync(f.root, { recursive: true, force: true }));
  let sandboxStarted = false;
  it('starts a skill sandbox', { timeout: 120_000 }, async () => {
    const c = cluster();
    const from = c.logs.length;
    c.start('skill-sandbox', 1);
    await c.waitLog(/skill-sandbox serving/, from, 90_000);
    sandboxStarted = true;
  });
  environmentTests(
    () => {
      expect(sandboxStarted).toBe(true);
      return cluster().url;
    },
    f.config,
    2,
  );
});
