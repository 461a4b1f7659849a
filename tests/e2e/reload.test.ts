/**
 * `POST /admin/reload` (issue 13): a tool module dropped into TOOLS_DIRS and a skill dropped into
 * SKILLS_ROOT become visible without a restart, on every replica, embedded and in a cluster; only
 * an admin key may ask (a tenant key gets 403).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer, type ClusterHarness } from './helpers.js';

const TENANT_KEY = 'reload-tenant-key';
const ADMIN_KEY = 'reload-admin-key';

interface ServiceResult {
  service: string;
  instance: string;
  ok: boolean;
  reloaded: Record<string, unknown>;
  error?: string;
}

/** A tools folder and a skills folder, empty at boot. */
function folders(prefix: string) {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  const tools = path.join(root, 'tools');
  const skills = path.join(root, 'skills');
  mkdirSync(tools);
  mkdirSync(skills);
  return {
    root,
    tools,
    skills,
    env: {
      TOOLS_DIRS: tools,
      SKILLS_ROOT: skills,
      AGENTLOOP_API_KEYS: `${TENANT_KEY}:acme`,
      AGENTLOOP_ADMIN_KEYS: `${ADMIN_KEY}:ops`,
      ALLOW_SCRIPTED_MODEL: 'true',
    },
    dropToolAndSkill() {
      writeFileSync(
        path.join(tools, 'greet.mjs'),
        "export const greet = { name: 'greet', description: 'Greets', schema: { type: 'object', properties: {} }, execute: () => 'Hello from a reloaded tool' };\n",
      );
      mkdirSync(path.join(skills, 'hello-skill'));
      writeFileSync(
        path.join(skills, 'hello-skill', 'SKILL.md'),
        '---\nname: hello-skill\ndescription: Says hello, dropped in after boot.\n---\n# Hello skill\n\nSay hello.\n',
      );
    },
  };
}

async function reload(url: string, key: string | undefined): Promise<{ status: number; body: { ok?: boolean; services?: ServiceResult[]; detail?: string } }> {
  const res = await fetch(`${url}/admin/reload`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({ reason: 'e2e', wait_ms: 3000 }),
  });
  return { status: res.status, body: (await res.json()) as { ok?: boolean; services?: ServiceResult[]; detail?: string } };
}

/** The content of the tool message when a scripted run calls `greet`. */
async function callGreet(url: string): Promise<string> {
  const client = new Client({ apiUrl: url, apiKey: TENANT_KEY });
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'greet me' }] },
    config: scripted([{ tool_calls: [{ name: 'greet', args: {} }] }, { content: 'done' }]),
  })) as { messages: Array<{ type: string; content: unknown }> };
  return String(values.messages.find((m) => m.type === 'tool')?.content);
}

/**
 * Every replica of every service answered: `toolRunners` tool-runners, `replicas` of each other
 * service. Embedded with orchestrator threads (EMBEDDED_THREADS), each thread's services are
 * replicas of their own, as in a cluster: each reloads its own state and answers for it, its
 * instance naming its thread.
 */
function expectReloaded(services: ServiceResult[], toolRunners: number, replicas = 1): void {
  const of = (name: string) => services.filter((s) => s.service === name);
  expect(of('tool-runner')).toHaveLength(toolRunners);
  for (const r of of('tool-runner')) expect(r).toMatchObject({ ok: true, reloaded: { tools: expect.arrayContaining(['greet', 'read_file']) } });
  expect(new Set(of('tool-runner').map((r) => r.instance)).size).toBe(toolRunners);
  const each = (name: string, expected: Record<string, unknown>) => {
    expect(of(name)).toHaveLength(replicas);
    for (const r of of(name)) expect(r).toMatchObject(expected);
  };
  each('skill-sandbox', { ok: true, reloaded: { skills: expect.arrayContaining(['hello-skill']) } });
  each('orchestrator', { ok: true });
  each('approval', { ok: true, reloaded: { enabled: true } });
  each('mcp-broker', { ok: true, reloaded: { servers: expect.any(Array) } });
}

describe('POST /admin/reload (embedded)', () => {
  const dirs = folders('agentloop-reload-');
  const server = useEmbeddedServer('agentloop-reload-data-', dirs.env);
  afterAll(() => rmSync(dirs.root, { recursive: true, force: true }));

  it('is refused to a tenant key (403) and to no key (401)', async () => {
    const tenant = await reload(server.url, TENANT_KEY);
    expect(tenant.status).toBe(403);
    expect(tenant.body.detail).toMatch(/Admin only: this is a tenant API key/);
    expect((await reload(server.url, undefined)).status).toBe(401);
  });

  it('makes a tool and a skill dropped in after boot visible without a restart', async () => {
    expect(await callGreet(server.url)).toMatch(/^Error/);
    dirs.dropToolAndSkill();
    const res = await reload(server.url, ADMIN_KEY);
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    // One replica of each service per orchestrator thread (one without threads).
    const threads = server.server.orchestratorThreadIds;
    const replicas = Math.max(1, threads.length);
    expectReloaded(res.body.services ?? [], replicas, replicas);
    const instances = (res.body.services ?? []).map((r) => r.instance);
    if (threads.length > 0) expect(new Set(instances.map((i) => /:thread-(\d+):/.exec(i)?.[1]))).toEqual(new Set(threads.map(String)));
    else for (const i of instances) expect(i).not.toContain(':thread-');
    expect(await callGreet(server.url)).toBe('Hello from a reloaded tool');
  });
});

describe('POST /admin/reload (cluster)', () => {
  const dirs = folders('agentloop-reload-cluster-');
  const cluster = useCluster({ env: dirs.env });
  afterAll(() => rmSync(dirs.root, { recursive: true, force: true }));

  const startMore = async (c: ClusterHarness) => {
    const from = c.logs.length;
    c.start('tool-runner', 2);
    c.start('skill-sandbox', 1);
    c.start('mcp-broker', 1);
    await c.waitLog(/\[tool-runner#2\].*tool-runner serving/, from, 90_000);
    await c.waitLog(/skill-sandbox serving/, from, 90_000);
    await c.waitLog(/mcp-broker serving/, from, 90_000);
  };

  it('reloads every replica of every service over NATS: the new tool runs, the new skill is listed', async () => {
    const c = cluster();
    await startMore(c);
    expect(await callGreet(c.url)).toMatch(/^Error/);
    dirs.dropToolAndSkill();
    expect((await reload(c.url, TENANT_KEY)).status).toBe(403);
    const res = await reload(c.url, ADMIN_KEY);
    expect(res.status).toBe(200);
    expectReloaded(res.body.services ?? [], 2);
    // Both tool-runner replicas reloaded: whichever serves the call knows the tool.
    for (let i = 0; i < 4; i++) expect(await callGreet(c.url)).toBe('Hello from a reloaded tool');
  }, 240_000);
});
