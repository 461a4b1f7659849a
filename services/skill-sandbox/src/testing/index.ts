/**
 * Test harness: a skill sandbox over a MemoryBus with its own SKILLS_ROOT, skills.yaml, workspace
 * root and dependency cache in a temp folder, plus typed helpers for each subject.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MemoryBus, type Bus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListSkillsRequestSchema,
  ListSkillsResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  LoadSkillRequestSchema,
  LoadSkillResponseSchema,
  ReloadSkillsRequestSchema,
  ReloadSkillsResponseSchema,
  create,
  fromBinary,
  toBinary,
  type ExecuteToolResponse,
  type ListSkillsResponse,
  type ListToolsResponse,
  type LoadSkillResponse,
  type ReloadSkillsResponse,
} from '@agentloop/proto';
import { createTempDir, type TempDir } from '@agentloop/workspace';
import { DEFAULT_SKILLS_ROOT, loadSkillSandboxConfig } from '../config.js';
import { SKILL_SUBJECTS, createSkillSandbox, type SkillSandbox } from '../service.js';

export interface SandboxHarness extends AsyncDisposable {
  bus: Bus;
  sandbox: SkillSandbox;
  /** SKILLS_ROOT (a copy of the project's skills plus what the test adds). */
  skillsRoot: string;
  skillsConfig: string;
  workspaceRoot: string;
  cacheRoot: string;
  /** `<workspaceRoot>/<tenant>/<thread>`. */
  workspace(tenant?: string, thread?: string): string;
  listSkills(tenantId: string, headers?: Record<string, string>): Promise<ListSkillsResponse>;
  loadSkill(tenantId: string, threadId: string, skillId: string): Promise<LoadSkillResponse>;
  listTools(tenantId: string, subagent?: boolean): Promise<ListToolsResponse>;
  execute(
    toolName: string,
    args: unknown,
    opts?: { tenantId?: string; threadId?: string; subagent?: boolean; headers?: Record<string, string> },
  ): Promise<ExecuteToolResponse>;
  reload(reason?: string): Promise<ReloadSkillsResponse>;
}

export interface HarnessOptions {
  /** skills.yaml text. */
  skillsYaml?: string;
  /** Extra environment for loadSkillSandboxConfig. */
  env?: Record<string, string>;
  /** Copy the project's skills/ into SKILLS_ROOT (default true). */
  copyProjectSkills?: boolean;
  /** Files to create under SKILLS_ROOT before start, e.g. {'t/SKILL.md': '...'}. */
  files?: Record<string, string>;
  /** A bus to serve on (default: a new MemoryBus, closed on dispose). */
  bus?: Bus;
}

/** Starts a sandbox in a temp folder; dispose stops it and removes the folder. */
export async function startSandboxHarness(opts: HarnessOptions = {}): Promise<SandboxHarness> {
  const tmp: TempDir = await createTempDir('agentloop-skill-sandbox-');
  const skillsRoot = path.join(tmp.path, 'skills');
  if (opts.copyProjectSkills ?? true) await cp(DEFAULT_SKILLS_ROOT, skillsRoot, { recursive: true });
  else await mkdir(skillsRoot, { recursive: true });
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    await mkdir(path.dirname(path.join(skillsRoot, rel)), { recursive: true });
    await writeFile(path.join(skillsRoot, rel), content);
  }
  const skillsConfig = path.join(tmp.path, 'skills.yaml');
  await writeFile(skillsConfig, opts.skillsYaml ?? '');
  const workspaceRoot = path.join(tmp.path, 'ws');
  const cacheRoot = path.join(tmp.path, 'deps');
  const ownBus = opts.bus === undefined;
  const bus = opts.bus ?? new MemoryBus();
  const sandbox = createSkillSandbox({
    bus,
    logger: silentLogger(),
    config: loadSkillSandboxConfig({
      WORKSPACE_ROOT: workspaceRoot,
      SKILLS_ROOT: skillsRoot,
      SKILLS_CONFIG: skillsConfig,
      SKILLS_CACHE: cacheRoot,
      ...opts.env,
    }),
  });
  await sandbox.start();
  const request = async (subject: string, data: Uint8Array, headers: Record<string, string> = {}) =>
    (await bus.request(subject, data, { timeoutMs: 120_000, headers })).data;
  return {
    bus,
    sandbox,
    skillsRoot,
    skillsConfig,
    workspaceRoot,
    cacheRoot,
    workspace: (tenant = 'acme', thread = 'th-1') => path.join(workspaceRoot, tenant, thread),
    listSkills: async (tenantId, headers) =>
      fromBinary(
        ListSkillsResponseSchema,
        await request(SKILL_SUBJECTS.list, toBinary(ListSkillsRequestSchema, create(ListSkillsRequestSchema, { tenantId })), headers),
      ),
    loadSkill: async (tenantId, threadId, skillId) =>
      fromBinary(
        LoadSkillResponseSchema,
        await request(SKILL_SUBJECTS.load, toBinary(LoadSkillRequestSchema, create(LoadSkillRequestSchema, { tenantId, threadId, skillId }))),
      ),
    listTools: async (tenantId, subagent = false) =>
      fromBinary(
        ListToolsResponseSchema,
        await request(SKILL_SUBJECTS.toolsList, toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId, subagent }))),
      ),
    execute: async (toolName, args, o = {}) => {
      const req = create(ExecuteToolRequestSchema, {
        tenantId: o.tenantId ?? 'acme',
        threadId: o.threadId ?? 'th-1',
        runId: 'run-1',
        toolCallId: 'call-1',
        toolName,
        argsJson: typeof args === 'string' ? args : JSON.stringify(args),
        subagent: o.subagent ?? false,
      });
      return fromBinary(ExecuteToolResponseSchema, await request(SKILL_SUBJECTS.toolsExecute, toBinary(ExecuteToolRequestSchema, req), o.headers));
    },
    reload: async (reason = 'test') =>
      fromBinary(
        ReloadSkillsResponseSchema,
        await request(SKILL_SUBJECTS.reload, toBinary(ReloadSkillsRequestSchema, create(ReloadSkillsRequestSchema, { reason }))),
      ),
    async [Symbol.asyncDispose]() {
      await sandbox.stop();
      if (ownBus) await bus.close();
      await tmp[Symbol.asyncDispose]();
    },
  };
}
