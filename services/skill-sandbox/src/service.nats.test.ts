import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Headers, RemoteError, connectNatsBus, type NatsBus } from '@agentloop/bus';
import { SkillCatalogResponse } from '@agentloop/skills';
import { startNats, type DevServer } from '@agentloop/devservers';
import {
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  ReloadSkillsRequestSchema,
  ReloadSkillsResponseSchema,
  create,
  fromBinary,
  toBinary,
} from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { loadSkillSandboxConfig } from './config.js';
import { SKILL_SUBJECTS, createSkillSandbox, type SkillSandbox } from './service.js';
import { startSandboxHarness, type SandboxHarness } from './testing/index.js';

// Two replicas in the `skill-sandbox` queue group on a real nats-server, sharing one skills folder
// and one workspace volume, as in a cluster.
describe('skill sandbox on NATS', () => {
  let nats: DevServer;
  const buses: NatsBus[] = [];
  let shared: SandboxHarness;
  let second: SkillSandbox;
  let client: NatsBus;

  beforeAll(async () => {
    nats = await startNats({ jetstream: false });
    for (let i = 0; i < 2; i++) buses.push(await connectNatsBus({ url: nats.url, name: `skill-sandbox-${i}` }));
    shared = await startSandboxHarness({ bus: buses[0]! });
    // The second replica serves the same folders (one shared volume).
    second = createSkillSandbox({
      bus: buses[1]!,
      logger: silentLogger(),
      config: loadSkillSandboxConfig({
        WORKSPACE_ROOT: shared.workspaceRoot,
        SKILLS_ROOT: shared.skillsRoot,
        SKILLS_CONFIG: shared.skillsConfig,
        SKILLS_CACHE: shared.cacheRoot,
      }),
    });
    await second.start();
    client = await connectNatsBus({ url: nats.url, name: 'test-client' });
    await mkdir(path.join(shared.workspace('tenant-a', 'thread-n'), 'uploads'), { recursive: true });
    await writeFile(path.join(shared.workspace('tenant-a', 'thread-n'), 'uploads', 'sales.csv'), 'region,sales\nnorth,120\nsouth,80\neast,100\n');
  });

  afterAll(async () => {
    await second?.stop();
    await shared?.[Symbol.asyncDispose]();
    for (const b of [...buses, client]) await b?.close();
    await nats?.stop();
  });

  async function execute(toolName: string, args: Record<string, unknown>) {
    const req = create(ExecuteToolRequestSchema, {
      tenantId: 'tenant-a',
      threadId: 'thread-n',
      runId: 'r',
      toolCallId: 'c',
      toolName,
      argsJson: JSON.stringify(args),
    });
    const reply = await client.request(SKILL_SUBJECTS.toolsExecute, toBinary(ExecuteToolRequestSchema, req), {
      timeoutMs: 30_000,
      headers: { [Headers.tenant]: 'tenant-a' },
    });
    return fromBinary(ExecuteToolResponseSchema, reply.data);
  }

  it('serves the tool protocol through the queue group: skill and run_skill_script', async () => {
    const list = fromBinary(
      ListToolsResponseSchema,
      (
        await client.request(SKILL_SUBJECTS.toolsList, toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'tenant-a' })), {
          timeoutMs: 10_000,
        })
      ).data,
    );
    expect(list.tools.map((t) => t.name)).toEqual(['skill', 'run_skill_script']);
    expect((await execute('skill', { skill: 'csv-stats' })).content).toMatch(/^# Skill csv-stats \(skills\/csv-stats\/SKILL\.md\)/);
    // Whichever replica answers, the script sees the same workspace.
    for (let i = 0; i < 4; i++) {
      const res = await execute('run_skill_script', {
        skill_id: 'csv-stats',
        script_name: i % 2 ? 'stats.mjs' : 'stats.py',
        args: { file: 'uploads/sales.csv' },
      });
      expect(res.error, res.content).toBeUndefined();
      expect((JSON.parse(res.content) as { columns: { sales: { mean: number } } }).columns.sales.mean).toBe(100);
    }
  });

  it('answers the JSON catalog over NATS, and refuses an unknown environment as INVALID_ARGUMENT', async () => {
    const ask = (body: unknown) =>
      client.request(SKILL_SUBJECTS.catalog, new TextEncoder().encode(JSON.stringify(body)), { timeoutMs: 10_000, headers: { [Headers.tenant]: 'tenant-a' } });
    const catalog = SkillCatalogResponse.parse(JSON.parse(new TextDecoder().decode((await ask({})).data)));
    expect(catalog.skills.find((s) => s.id === 'csv-stats')).toMatchObject({ version: '1.1', warnings: [], allowed_tools: null });
    const refused = await ask({ environment: 'nope' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RemoteError);
    expect(refused).toMatchObject({ remoteCode: 'INVALID_ARGUMENT', message: expect.stringMatching(/^Unknown environment: nope\./) });
  });

  it('reloads every replica through the broadcast subject', async () => {
    await mkdir(path.join(shared.skillsRoot, 'late'));
    await writeFile(path.join(shared.skillsRoot, 'late', 'SKILL.md'), '---\nname: Late\ndescription: added after start\n---\n');
    const reply = await client.request(SKILL_SUBJECTS.reload, toBinary(ReloadSkillsRequestSchema, create(ReloadSkillsRequestSchema, { reason: 'nats test' })), {
      timeoutMs: 10_000,
    });
    const res = fromBinary(ReloadSkillsResponseSchema, reply.data);
    expect(res.skills).toContain('late');
    expect(res.replica).not.toBe('');
    await vi.waitFor(() => expect([shared.sandbox, second].map((s) => s.skills.some((k) => k.id === 'late'))).toEqual([true, true]), {
      timeout: 10_000,
      interval: 20,
    });
  });
});
