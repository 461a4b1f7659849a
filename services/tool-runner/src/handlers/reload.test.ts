import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MemoryBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  ReloadToolsRequestSchema,
  ReloadToolsResponseSchema,
} from '@agentloop/proto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadToolRunnerConfig } from '../config.js';
import { TOOL_SUBJECTS, createToolRunner, type ToolRunner } from '../service.js';
import { createTempDir, type TempDir } from '../testing/index.js';
import { ToolsConfigError } from '../tools-config.js';

const tool = (name: string) => `export const t = { name: '${name}', description: '${name}', schema: { type: 'object' }, execute: () => '${name} ran' };\n`;

let tmp: TempDir;
let bus: MemoryBus;
let client: MemoryBus;
let runners: ToolRunner[];
let toolsDir: string;
let configPath: string;

function env(): Record<string, string> {
  return { WORKSPACE_ROOT: path.join(tmp.path, 'ws'), TOOLS_DIRS: toolsDir, TOOLS_CONFIG: configPath };
}

beforeEach(async () => {
  tmp = await createTempDir();
  toolsDir = path.join(tmp.path, 'tools');
  await mkdir(toolsDir);
  configPath = path.join(tmp.path, 'tools.yaml');
  await writeFile(configPath, 'core:\n  now: {}\n');
  bus = new MemoryBus();
  client = bus.peer();
  runners = [];
});
afterEach(async () => {
  for (const r of runners) await r.stop();
  await client.close();
  await bus.close();
  await tmp[Symbol.asyncDispose]();
});

/** Two replicas (queue group) on one in-process bus, sharing the tool folder. */
async function twoReplicas(): Promise<ToolRunner[]> {
  for (let i = 0; i < 2; i++) {
    const r = createToolRunner({ bus: i === 0 ? bus : bus.peer(), logger: silentLogger(), config: loadToolRunnerConfig(env()) });
    await r.start();
    runners.push(r);
  }
  return runners;
}

async function requestReload(reason = 'test') {
  const reply = await client.request(TOOL_SUBJECTS.reload, toBinary(ReloadToolsRequestSchema, create(ReloadToolsRequestSchema, { reason })), {
    timeoutMs: 10_000,
  });
  return fromBinary(ReloadToolsResponseSchema, reply.data);
}

describe('agentloop.tools.reload', () => {
  it('boots with the modules of TOOLS_DIRS', async () => {
    await writeFile(path.join(toolsDir, 'alpha.mjs'), tool('alpha'));
    const [a] = await twoReplicas();
    expect(a?.registry.has('alpha')).toBe(true);
  });

  it('replies with the counts, the skipped modules and their reasons', async () => {
    await twoReplicas();
    await writeFile(path.join(toolsDir, 'alpha.mjs'), tool('alpha'));
    await writeFile(path.join(toolsDir, 'broken.mjs'), 'throw new Error("boom at import")');
    const res = await requestReload();
    expect(res.loaded).toBe(1);
    expect(res.skipped).toBe(1);
    expect(res.skippedModules.map((s) => [s.source, s.reason])).toEqual([[path.join(toolsDir, 'broken.mjs'), 'import failed: Error: boom at import']]);
    expect(res.registered).toContain('alpha');
    expect(res.configError).toBe('');
    expect(runners.map((r) => r.replica)).toContain(res.replica);
  });

  it('reloads every replica, not only the one that answered, each once', async () => {
    const [a, b] = await twoReplicas();
    const spies = [vi.spyOn(a!.loader, 'reload'), vi.spyOn(b!.loader, 'reload')];
    await writeFile(path.join(toolsDir, 'beta.mjs'), tool('beta'));
    await requestReload();
    await vi.waitFor(() => expect(runners.every((r) => r.registry.has('beta'))).toBe(true), { timeout: 10_000, interval: 20 });
    await Promise.all(runners.map((r) => r.loader.reload('settle')));
    // One reload from the request or the broadcast, plus the "settle" call above.
    expect(spies.map((s) => s.mock.calls.filter(([reason]) => reason !== 'settle').length)).toEqual([1, 1]);
  });

  it('keeps the previous tools.yaml and says why when the new one is invalid', async () => {
    await twoReplicas();
    await writeFile(configPath, 'core:\n  now:\n    enabled: false\n');
    const res = await requestReload();
    expect(res.configError).toContain('core.now.enabled: core tools are always enabled');
    expect(res.registered).toContain('now');
  });

  it('refuses to start with an invalid tools.yaml', async () => {
    await writeFile(configPath, 'optional:\n  http_fetch:\n    enabled: 3\n');
    const r = createToolRunner({ bus, logger: silentLogger(), config: loadToolRunnerConfig(env()) });
    await expect(r.start()).rejects.toBeInstanceOf(ToolsConfigError);
    await expect(client.request(TOOL_SUBJECTS.list, new Uint8Array(), { timeoutMs: 1_000 })).rejects.toThrow();
  });

  it('lists a mentioned disabled tool over the bus, after the persistent ones', async () => {
    await writeFile(path.join(toolsDir, 'alpha.mjs'), tool('alpha'));
    await writeFile(configPath, 'core:\n  now: { available_to_subagent: true }\noptional:\n  alpha: { enabled: false }\n');
    await twoReplicas();
    const reply = await client.request(
      TOOL_SUBJECTS.list,
      toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 't', mentioned: ['alpha'] })),
      { timeoutMs: 5_000 },
    );
    const res = fromBinary(ListToolsResponseSchema, reply.data);
    const names = res.tools.map((t) => t.name);
    expect(names.slice(0, 5)).toEqual(['now', 'list_workspace_files', 'read_file', 'write_file', 'find_files']);
    expect(names.at(-1)).toBe('alpha');
  });
});
