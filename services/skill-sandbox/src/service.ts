import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Headers, type Bus, type BusMessage, type RequestHandler, type Subscription } from '@agentloop/bus';
import { AgentLoopError, envInt, errorMessage, parseConfig, type Logger } from '@agentloop/core';
import {
  ErrorSchema,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListSkillsRequestSchema,
  ListSkillsResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  LoadSkillRequestSchema,
  LoadSkillResponseSchema,
  SkillInfoSchema,
  ToolMetadataSchema,
  ToolSpecSchema,
  create,
  fromBinary,
  toBinary,
  type ToolSpec,
  type WireError,
} from '@agentloop/proto';
import { SkillsConfig, scanSkills, parseSkillDoc, type Skill } from '@agentloop/skills';
import { WorkspaceManager, type Workspace } from '@agentloop/workspace';
import { resolvePython, runScript } from './runner.js';

/** The project's skills folder (`<repo>/skills`), from src/ or dist/. */
export const DEFAULT_SKILLS_ROOT = fileURLToPath(new URL('../../../skills', import.meta.url));

export const SkillSandboxEnv = z.object({
  NATS_URL: z.string().optional(),
  LOG_LEVEL: z.string().default('info'),
  WORKSPACE_ROOT: z.string().min(1).default('./data/workspaces'),
  /** Skill packages: one folder per skill with SKILL.md (default: the project's skills/). */
  SKILLS_ROOT: z.string().min(1).optional(),
  /** skills.yaml (default: libs/skills/config/skills.yaml). */
  SKILLS_CONFIG: z.string().min(1).optional(),
  SKILL_SCRIPT_TIMEOUT_MS: envInt(30_000, 100, 3_600_000),
  SKILL_SCRIPT_MAX_OUTPUT_BYTES: envInt(1024 * 1024, 1024, 64 * 1024 * 1024),
  SKILL_SCRIPT_MAX_MEMORY_MB: envInt(1024, 64, 65_536),
});
export type SkillSandboxConfig = z.infer<typeof SkillSandboxEnv>;

export function loadSkillSandboxConfig(env: NodeJS.ProcessEnv = process.env): SkillSandboxConfig {
  return parseConfig(SkillSandboxEnv, env);
}

export const SKILL_SUBJECTS = {
  list: 'agentloop.skills.list',
  load: 'agentloop.skills.load',
  toolsList: 'agentloop.skills.tools.list',
  toolsExecute: 'agentloop.skills.tools.execute',
  reload: 'agentloop.skills.reload',
} as const;

export const SKILL_SANDBOX_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

class SkillError extends AgentLoopError {}

const toolSpec = (name: string, description: string, schema: object, displayName: string): ToolSpec =>
  create(ToolSpecSchema, {
    name,
    description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, { category: 'skills', tags: ['skills'], idempotent: false, displayName, availableToSubagent: true, enabled: true }),
  });

export interface SkillSandbox {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Rescans the skills folder and skills.yaml. */
  reload(): Promise<void>;
  readonly skills: readonly Skill[];
}

/**
 * The skill sandbox (seed 000 Part 3, seed 002): skill registry, the `skill` and `run_skill_script`
 * tools (tool protocol, so the orchestrator treats it as a tool provider), loading a skill into a
 * thread's workspace (skills/<id> → the skill folder, read-only for the tools), per-tenant
 * allowlists and version pins from skills.yaml.
 */
export function createSkillSandbox(deps: { bus: Bus; logger: Logger; config: SkillSandboxConfig }): SkillSandbox {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'skill-sandbox' });
  const root = config.SKILLS_ROOT ?? DEFAULT_SKILLS_ROOT;
  const workspaces = new WorkspaceManager({ root: config.WORKSPACE_ROOT, skillRoots: [root], logger });
  let skills: Skill[] = [];
  let settings: SkillsConfig = SkillsConfig.parse('');
  let python: string | undefined;
  let subs: Subscription[] = [];

  const reload = async () => {
    settings = await SkillsConfig.load(config.SKILLS_CONFIG);
    const scanned = await scanSkills(root);
    for (const s of scanned.skipped) logger.warn({ skill: s.id, reason: s.reason }, 'skill skipped');
    skills = scanned.skills;
    logger.info({ skills: skills.map((s) => s.id), root }, 'skills loaded');
  };

  /** Skills a tenant may use: the system on, the tenant allowed, the pinned version (if any) matching. */
  const usable = (tenant: string, subagent = false): Skill[] =>
    settings.enabled
      ? skills.filter((s) => {
          if (!settings.allows(tenant, s.id)) return false;
          const pin = settings.entry(s.id)?.version;
          if (pin !== undefined && pin !== s.version) return false;
          return !subagent || (settings.entry(s.id)?.available_to_subagent ?? true);
        })
      : [];

  const find = (tenant: string, id: string, subagent = false): Skill => {
    const list = usable(tenant, subagent);
    const skill = list.find((s) => s.id === id);
    if (skill) return skill;
    const pinned = skills.find((s) => s.id === id);
    const pin = pinned ? settings.entry(id)?.version : undefined;
    if (pinned && pin !== undefined && pin !== pinned.version) {
      throw new SkillError('PERMISSION_DENIED', `Skill ${id} is version ${pinned.version || '(none)'} but version ${pin} is pinned; it is not available until they match.`);
    }
    throw new SkillError('NOT_FOUND', `Skill not found: ${id}. Available skills: ${list.map((s) => s.id).join(', ') || '(none)'}`);
  };

  /** Links skills/<id> in the thread's workspace to the skill folder (idempotent). */
  const link = async (ws: Workspace, skill: Skill): Promise<string> => {
    const target = path.join(ws.root, 'skills', skill.id);
    const st = await fs.lstat(target).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      if ((await fs.readlink(target)) === skill.dir) return `skills/${skill.id}/${path.basename(skill.docPath)}`;
      await fs.unlink(target);
    } else if (st) {
      throw new SkillError('CONFLICT', `skills/${skill.id} already exists in the workspace and is not a skill link`);
    }
    await fs.symlink(skill.dir, target, 'dir');
    return `skills/${skill.id}/${path.basename(skill.docPath)}`;
  };

  const tenantOf = (msg: BusMessage, body: string): string => {
    const header = msg.headers[Headers.tenant];
    if (body && header && body !== header) throw new SkillError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
    return body || header || '';
  };

  const wire = (err: unknown, what: string): WireError => {
    if (err instanceof AgentLoopError) return create(ErrorSchema, { code: err.code, message: err.message, retryable: err.retryable });
    logger.error({ err: errorMessage(err) }, `${what} failed`);
    return create(ErrorSchema, { code: 'INTERNAL', message: `The skill sandbox failed: ${errorMessage(workspaces.redact(errorMessage(err)))}`, retryable: false });
  };

  const listTools = (tenant: string, subagent: boolean): ToolSpec[] => {
    const list = usable(tenant, subagent).filter((s) => settings.inCatalog(s.id));
    if (list.length === 0) return [];
    const catalog = list.map((s) => `- ${s.id}: ${s.name} — ${s.description}${s.scripts.length ? ` (scripts: ${s.scripts.join(', ')})` : ''}`).join('\n');
    return [
      toolSpec(
        'skill',
        `Load a skill (a knowledge package: instructions and optional scripts) and read its document. It is also linked into the workspace at skills/<id>/. Available skills:\n${catalog}`,
        { type: 'object', properties: { skill: { type: 'string', description: 'The skill id, e.g. "pdf"' } }, required: ['skill'] },
        'Loading a skill',
      ),
      toolSpec(
        'run_skill_script',
        "Run a script of a skill in an isolated process. The script reads `args` as JSON on stdin, runs in the workspace (relative paths like uploads/x.csv work) and prints its result. Read the skill's document first.",
        {
          type: 'object',
          properties: {
            skill_id: { type: 'string' },
            script_name: { type: 'string', description: 'A file name under the skill\'s scripts/, e.g. "stats.py"' },
            args: { description: 'Arguments for the script (a JSON object, or a JSON string)' },
          },
          required: ['skill_id', 'script_name'],
        },
        'Running a skill script',
      ),
    ];
  };

  const executeSkillTool = async (tenant: string, threadId: string, name: string, args: Record<string, unknown>, subagent: boolean): Promise<string> => {
    const ws = await workspaces.ensure(tenant, threadId);
    if (name === 'skill') {
      const id = typeof args.skill === 'string' ? args.skill.trim() : '';
      if (!id) throw new SkillError('INVALID_ARGUMENT', 'Invalid arguments for skill: "skill" (the skill id) is required');
      const skill = find(tenant, id, subagent);
      const docPath = await link(ws, skill);
      const body = parseSkillDoc(await fs.readFile(skill.docPath, 'utf8'), skill.id).body;
      return `# Skill ${skill.name} (${docPath})\n\n${body}`;
    }
    if (name === 'run_skill_script') {
      const id = typeof args.skill_id === 'string' ? args.skill_id.trim() : '';
      const script = typeof args.script_name === 'string' ? args.script_name.trim() : '';
      if (!id || !script) throw new SkillError('INVALID_ARGUMENT', 'Invalid arguments for run_skill_script: "skill_id" and "script_name" are required');
      const skill = find(tenant, id, subagent);
      // Only a file listed directly under scripts/: no paths, no traversal, no links out.
      if (!skill.scripts.includes(script)) {
        throw new SkillError('NOT_FOUND', `Script not found: ${script} is not a script of skill ${id}. Its scripts: ${skill.scripts.join(', ') || '(none)'}`);
      }
      const scriptPath = path.join(skill.dir, 'scripts', script);
      const real = await fs.realpath(scriptPath);
      if (path.dirname(real) !== path.join(skill.dir, 'scripts')) throw new SkillError('PERMISSION_DENIED', `Script ${script} of skill ${id} points outside the skill`);
      await link(ws, skill);
      const kind = script.endsWith('.py') ? 'python' : 'node';
      const interpreter = kind === 'python' ? (python ??= await resolvePython()) : process.execPath;
      if (!interpreter) throw new SkillError('UNAVAILABLE', 'Python 3 is not installed on the skill sandbox; Python skill scripts cannot run');
      let input: string;
      if (typeof args.args === 'string') {
        try {
          input = JSON.stringify(JSON.parse(args.args === '' ? '{}' : args.args));
        } catch (err) {
          throw new SkillError('INVALID_ARGUMENT', `Invalid arguments for run_skill_script: "args" is not valid JSON: ${errorMessage(err)}`);
        }
      } else input = JSON.stringify(args.args ?? {});
      const started = Date.now();
      const res = await runScript({
        interpreter,
        kind,
        script: real,
        workspace: ws.root,
        input,
        limits: { timeoutMs: config.SKILL_SCRIPT_TIMEOUT_MS, maxOutputBytes: config.SKILL_SCRIPT_MAX_OUTPUT_BYTES, maxMemoryBytes: config.SKILL_SCRIPT_MAX_MEMORY_MB * 1024 * 1024 },
      });
      logger.info({ tenant, skill: id, script, exit: res.exitCode, signal: res.signal, timed_out: res.timedOut, ms: Date.now() - started }, 'skill script ran');
      const redact = (t: string) => ws.redact(t);
      if (res.timedOut) throw new SkillError('TIMEOUT', `Script ${script} of skill ${id} did not finish within ${config.SKILL_SCRIPT_TIMEOUT_MS} ms and was stopped`);
      if (res.exitCode !== 0) {
        const missing = /ModuleNotFoundError: No module named '([^']+)'/.exec(res.stderr)?.[1];
        if (missing) {
          throw new SkillError('TOOL_FAILED', `Script execution failed: missing dependency: Python module '${missing}'. Check skills/${id}/requirements.txt, or ask an operator to install it for the skill sandbox.`);
        }
        const tail = redact(res.stderr.trim()).split('\n').slice(-20).join('\n');
        throw new SkillError('TOOL_FAILED', `script failed (exit ${res.exitCode ?? res.signal}): ${tail || '(no error output)'}`);
      }
      const text = redact(res.stdout.trim()) || '(the script printed nothing)';
      return res.truncated ? `${text}\n[output truncated at ${config.SKILL_SCRIPT_MAX_OUTPUT_BYTES} bytes]` : text;
    }
    throw new SkillError('NOT_FOUND', `Unknown tool: ${name}`);
  };

  const handlers: Record<string, RequestHandler> = {
    [SKILL_SUBJECTS.list]: async (msg) => {
      try {
        const req = fromBinary(ListSkillsRequestSchema, msg.data);
        const tenant = tenantOf(msg, req.tenantId);
        return toBinary(
          ListSkillsResponseSchema,
          create(ListSkillsResponseSchema, {
            skills: usable(tenant).map((s) =>
              create(SkillInfoSchema, {
                id: s.id,
                name: s.name,
                description: s.description,
                version: s.version,
                enabled: settings.inCatalog(s.id),
                availableToSubagent: settings.entry(s.id)?.available_to_subagent ?? true,
                autoLoadOnFileTypes: settings.entry(s.id)?.auto_load_on_file_types ?? [],
                scripts: s.scripts,
              }),
            ),
          }),
        );
      } catch (err) {
        return toBinary(ListSkillsResponseSchema, create(ListSkillsResponseSchema, { error: wire(err, 'list') }));
      }
    },
    [SKILL_SUBJECTS.load]: async (msg) => {
      try {
        const req = fromBinary(LoadSkillRequestSchema, msg.data);
        const tenant = tenantOf(msg, req.tenantId);
        const skill = find(tenant, req.skillId);
        const docPath = await link(await workspaces.ensure(tenant, req.threadId), skill);
        return toBinary(LoadSkillResponseSchema, create(LoadSkillResponseSchema, { docPath }));
      } catch (err) {
        return toBinary(LoadSkillResponseSchema, create(LoadSkillResponseSchema, { error: wire(err, 'load') }));
      }
    },
    [SKILL_SUBJECTS.toolsList]: async (msg) => {
      const req = fromBinary(ListToolsRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      return toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: listTools(tenant, req.subagent) }));
    },
    [SKILL_SUBJECTS.toolsExecute]: async (msg) => {
      let content: string;
      let error: WireError | undefined;
      try {
        const req = fromBinary(ExecuteToolRequestSchema, msg.data);
        const tenant = tenantOf(msg, req.tenantId);
        let args: Record<string, unknown>;
        try {
          const v: unknown = req.argsJson ? JSON.parse(req.argsJson) : {};
          if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
          args = v as Record<string, unknown>;
        } catch (err) {
          throw new SkillError('INVALID_ARGUMENT', `Invalid arguments for ${req.toolName}: ${errorMessage(err)}`);
        }
        content = await executeSkillTool(tenant, req.threadId, req.toolName, args, req.subagent);
      } catch (err) {
        error = wire(err, 'execute');
        content = `Error: ${error.message}`;
      }
      return toBinary(ExecuteToolResponseSchema, create(ExecuteToolResponseSchema, { content, ...(error ? { error } : {}) }));
    },
    [SKILL_SUBJECTS.reload]: async () => {
      await reload();
      return new Uint8Array();
    },
  };

  return {
    get skills() {
      return skills;
    },
    reload,
    async start() {
      if (subs.length > 0) return;
      await reload();
      const opts = { queue: 'skill-sandbox', version: SKILL_SANDBOX_VERSION, description: 'AgentLoop skills: registry, loading, scripts' };
      for (const [subject, handler] of Object.entries(handlers)) subs.push(await deps.bus.serve(subject, opts, handler));
      logger.info({ skills: skills.length }, 'skill-sandbox serving');
    },
    async stop() {
      await Promise.allSettled(subs.map((s) => s.unsubscribe()));
      subs = [];
    },
  };
}
