import { execFileSync } from 'node:child_process';
import { cp, lstat, mkdir, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListSkillsRequestSchema,
  ListSkillsResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  create,
  fromBinary,
  toBinary,
} from '@agentloop/proto';
import { createTempDir, type TempDir } from '@agentloop/workspace';
import { createSkillSandbox, DEFAULT_SKILLS_ROOT, loadSkillSandboxConfig, type SkillSandbox } from './service.js';

let tmp: TempDir;
let bus: MemoryBus;
let sandbox: SkillSandbox;
let wsRoot: string;

const SKILLS_YAML = `
optional:
  pdf: { enabled: false }
  pinned: { version: "2" }
tenants:
  globex: { allow: [csv-stats] }
`;

beforeEach(async () => {
  tmp = await createTempDir('agentloop-skills-');
  const root = path.join(tmp.path, 'skills');
  await cp(DEFAULT_SKILLS_ROOT, root, { recursive: true });
  // Test skills: a sleeper, an env reader, a version-pinned one.
  await mkdir(path.join(root, 'testing', 'scripts'), { recursive: true });
  await writeFile(path.join(root, 'testing', 'SKILL.md'), '---\nname: Testing\ndescription: scripts for tests\n---\nbody');
  await writeFile(path.join(root, 'testing', 'scripts', 'sleep.py'), 'import subprocess, time\nsubprocess.Popen(["sleep", "300"])\ntime.sleep(300)\n');
  await writeFile(path.join(root, 'testing', 'scripts', 'env.mjs'), 'console.log(JSON.stringify(process.env));\n');
  await writeFile(path.join(root, 'testing', 'scripts', 'fail.py'), 'import nonexistent_module_xyz\n');
  await writeFile(path.join(root, 'testing', 'scripts', 'loud.py'), 'print("x" * 5000)\n');
  await mkdir(path.join(root, 'pinned'), { recursive: true });
  await writeFile(path.join(root, 'pinned', 'SKILL.md'), '---\nname: Pinned\ndescription: pinned at 2\nversion: "1"\n---\nbody');
  await mkdir(path.join(root, 'broken'), { recursive: true });
  const config = path.join(tmp.path, 'skills.yaml');
  await writeFile(config, SKILLS_YAML);
  wsRoot = path.join(tmp.path, 'ws');
  process.env.AGENTLOOP_TEST_SECRET = 'do-not-leak';
  bus = new MemoryBus();
  sandbox = createSkillSandbox({
    bus,
    logger: silentLogger(),
    config: loadSkillSandboxConfig({ WORKSPACE_ROOT: wsRoot, SKILLS_ROOT: root, SKILLS_CONFIG: config, SKILL_SCRIPT_TIMEOUT_MS: '1500', SKILL_SCRIPT_MAX_OUTPUT_BYTES: '1024' }),
  });
  await sandbox.start();
});
afterEach(async () => {
  await sandbox.stop();
  await bus.close();
  delete process.env.AGENTLOOP_TEST_SECRET;
  await tmp[Symbol.asyncDispose]();
});

const exec = async (toolName: string, args: unknown, tenantId = 'acme') => {
  const req = create(ExecuteToolRequestSchema, { tenantId, threadId: 'th-1', runId: 'r', toolCallId: 'c', toolName, argsJson: JSON.stringify(args) });
  return fromBinary(ExecuteToolResponseSchema, (await bus.request('agentloop.skills.tools.execute', toBinary(ExecuteToolRequestSchema, req), { timeoutMs: 20_000 })).data);
};

describe('skill sandbox', () => {
  it('lists usable skills per tenant (allowlists, version pins) and skips broken packages', async () => {
    const list = async (tenantId: string) =>
      fromBinary(ListSkillsResponseSchema, (await bus.request('agentloop.skills.list', toBinary(ListSkillsRequestSchema, create(ListSkillsRequestSchema, { tenantId })), { timeoutMs: 2000 })).data).skills;
    const acme = await list('acme');
    expect(acme.map((s) => s.id)).toEqual(['csv-stats', 'docx', 'pdf', 'pptx', 'testing', 'xlsx']);
    expect(acme.find((s) => s.id === 'pdf')).toMatchObject({ enabled: false, name: 'PDF documents' });
    expect(acme.find((s) => s.id === 'csv-stats')?.scripts).toEqual(['stats.mjs', 'stats.py']);
    expect((await list('globex')).map((s) => s.id)).toEqual(['csv-stats']);
    const pinned = await exec('skill', { skill: 'pinned' });
    expect(pinned.content).toBe('Error: Skill pinned is version 1 but version 2 is pinned; it is not available until they match.');
  });

  it('offers skill and run_skill_script, with the catalog (enabled skills) in the description', async () => {
    const tools = fromBinary(ListToolsResponseSchema, (await bus.request('agentloop.skills.tools.list', toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'acme' })), { timeoutMs: 2000 })).data).tools;
    expect(tools.map((t) => t.name)).toEqual(['skill', 'run_skill_script']);
    expect(tools[0]!.description).toContain('- docx: Word documents');
    expect(tools[0]!.description).not.toContain('- pdf:');
  });

  it('the skill tool returns the document and links the skill into the workspace (idempotent)', async () => {
    const res = await exec('skill', { skill: 'docx' });
    expect(res.content).toMatch(/^# Skill Word documents \(skills\/docx\/SKILL\.md\)\n\n# Word documents/);
    const link = path.join(wsRoot, 'acme', 'th-1', 'skills', 'docx');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toContain(path.join('skills', 'docx'));
    expect((await exec('skill', { skill: 'docx' })).error).toBeUndefined();
    expect((await exec('skill', { skill: 'nope' })).content).toMatch(/^Error: Skill not found: nope\. Available skills: csv-stats, docx/);
  });

  it('runs the Python and the Node script of csv-stats on a workspace CSV', async () => {
    await mkdir(path.join(wsRoot, 'acme', 'th-1', 'uploads'), { recursive: true });
    await writeFile(path.join(wsRoot, 'acme', 'th-1', 'uploads', 'data.csv'), 'item,price\napple,2\npear,4\nbad,n/a\n');
    for (const script of ['stats.py', 'stats.mjs']) {
      const res = await exec('run_skill_script', { skill_id: 'csv-stats', script_name: script, args: { file: 'uploads/data.csv' } });
      expect(res.error, script).toBeUndefined();
      const out = JSON.parse(res.content) as { rows: number; columns: Record<string, { count: number; mean: number; skipped: number }> };
      expect(out.rows).toBe(3);
      expect(out.columns.price).toMatchObject({ count: 2, mean: 3, skipped: 1 });
    }
  });

  it('sandbox: no secret of the service in the environment, timeouts kill the script and its children, output capped', async () => {
    const env = JSON.parse((await exec('run_skill_script', { skill_id: 'testing', script_name: 'env.mjs' })).content) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(expect.arrayContaining(['AGENT_WORKSPACE_PATH', 'HOME', 'PATH']));
    expect(JSON.stringify(env)).not.toContain('do-not-leak');
    const slow = await exec('run_skill_script', { skill_id: 'testing', script_name: 'sleep.py' });
    expect(slow.content).toMatch(/^Error: Script sleep\.py of skill testing did not finish within 1500 ms and was stopped/);
    // The grandchild (`sleep 300`) went with the script's process group.
    expect(() => execFileSync('pgrep', ['-f', '^sleep 300$'])).toThrow();
    const loud = await exec('run_skill_script', { skill_id: 'testing', script_name: 'loud.py' });
    expect(loud.content).toMatch(/\[output truncated at 1024 bytes\]$/);
    const fail = await exec('run_skill_script', { skill_id: 'testing', script_name: 'fail.py' });
    expect(fail.content).toContain("missing dependency: Python module 'nonexistent_module_xyz'");
  });

  it('refuses scripts that are not the skill\'s own (traversal) and bad arguments, and keeps serving', async () => {
    expect((await exec('run_skill_script', { skill_id: 'csv-stats', script_name: '../../testing/scripts/env.mjs' })).content).toMatch(/^Error: Script not found/);
    expect((await exec('run_skill_script', { skill_id: 'testing', script_name: 'env.mjs' }, 'globex')).content).toMatch(/^Error: Skill not found: testing/);
    expect((await exec('run_skill_script', { skill_id: 'csv-stats', script_name: 'stats.py', args: '{bad' })).content).toMatch(/"args" is not valid JSON/);
    expect((await exec('skill', {})).content).toMatch(/"skill" \(the skill id\) is required/);
  });
});
