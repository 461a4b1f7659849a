import { promises as fs } from 'node:fs';
import path from 'node:path';
import { AgentLoopError, errorMessage, MAX_JSON_DEPTH, parseJsonWithin, type Logger, type PathRedactor } from '@agentloop/core';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { formatSkillCatalog, parseSkillDoc, resolveSkillLinks, SkillFileIndex } from '@agentloop/skills';
import { SANDBOX_WORKSPACE, type Sandbox } from '@agentloop/sandbox';
import type { WorkspaceManager } from '@agentloop/workspace';
import type { SkillCatalog } from './catalog.js';
import type { SkillSandboxConfig } from './config.js';
import type { DependencyInstaller } from './dependencies.js';
import { SkillSandboxError } from './errors.js';
import { loadSkill } from './loader.js';
import type { SandboxRedaction } from './redaction.js';
import { runScript, type PythonInfo, type SandboxCapabilities, type ScriptResult } from './runner.js';
import { runScriptInSandbox, SKILL_IN_SANDBOX } from './sandboxed-script.js';
import { scriptCall } from './script-call.js';
import { scriptsUnavailableMessage, type IsolationMode } from './script-isolation.js';
import { scriptOutcome } from './script-outcome.js';

export const SKILL_TOOL = 'skill';
export const RUN_SKILL_SCRIPT_TOOL = 'run_skill_script';

export interface ToolCall {
  tenantId: string;
  threadId: string;
  toolName: string;
  argsJson: string;
  subagent: boolean;
}

export interface ToolOutcome {
  /** The ToolMessage content; starts with "Error: " when the call failed. */
  content: string;
  error?: { code: string; message: string; retryable: boolean };
  durationMs: number;
}

/** How scripts run, decided when the service starts (service.ts chooseIsolation). */
export interface ScriptIsolation {
  mode: IsolationMode;
  /** Why not bubblewrap, when it is not. */
  reason?: string;
  /** Set in bubblewrap mode: every script runs in it. */
  sandbox?: Sandbox;
}

export interface SkillToolsDeps {
  catalog: SkillCatalog;
  workspaces: WorkspaceManager;
  dependencies: DependencyInstaller;
  config: SkillSandboxConfig;
  capabilities: SandboxCapabilities;
  isolation: ScriptIsolation;
  python: () => Promise<PythonInfo | undefined>;
  /** Real path of SKILLS_ROOT (Node scripts may read it). */
  skillsRoot: () => Promise<string>;
  /** Host paths → logical names in everything a call answers (redaction.ts). */
  redaction: SandboxRedaction;
  logger: Logger;
}

/** The sandbox's two tools over the tool protocol: `skill` (seed 002) and `run_skill_script` (seed 000 §3.7). */
export class SkillTools {
  constructor(private readonly d: SkillToolsDeps) {}

  /**
   * Tool specs for a tenant. Empty when the tenant has no skill in its catalog (for a sub-agent:
   * none available to sub-agents). The `skill` tool's description lists the catalog as it is now.
   */
  specs(tenant: string, subagent: boolean): ToolSpec[] {
    const skills = this.d.catalog.catalog(tenant, subagent);
    if (skills.length === 0) return [];
    const listing = formatSkillCatalog(skills.map((s) => ({ id: s.id, name: s.name, description: this.d.catalog.description(s), scripts: s.scripts })));
    const forSubagents = this.d.catalog.catalog(tenant, true).length > 0;
    return [
      spec(
        SKILL_TOOL,
        'Execute a skill: returns its instructions (a knowledge package, not a tool) and loads it into the workspace at ' +
          'skills/<id>/, where its files can be read. Read them before acting, then use your tools (and run_skill_script ' +
          `for the skill's scripts). Available skills:\n${listing}`,
        {
          type: 'object',
          properties: { skill: { type: 'string', description: 'The skill id (shown after "id:" when it differs from the name), e.g. "pdf"' } },
          required: ['skill'],
          additionalProperties: false,
        },
        'Load skill',
        forSubagents,
      ),
      spec(
        RUN_SKILL_SCRIPT_TOOL,
        'Run a script of a skill in an isolated process, as its SKILL.md says to (`python scripts/fill.py in.pdf out.pdf` → ' +
          'script_name "scripts/fill.py", args ["in.pdf", "out.pdf"]; `python -m scripts.fill` → module "scripts.fill"). It runs in the ' +
          "thread's workspace (workspace-relative paths such as uploads/form.pdf work; write results to outputs/) with the skill's " +
          'folder importable and its declared dependencies installed. Read the skill (the `skill` tool) first to learn its scripts. ' +
          `Scripts stop after ${Math.round(this.d.config.SKILL_SCRIPT_TIMEOUT_MS / 1000)} s.`,
        {
          type: 'object',
          properties: {
            skill_id: { type: 'string', description: 'The skill id, e.g. "pdf"' },
            script_name: {
              type: 'string',
              description: 'Path of the script under the skill\'s scripts/ folder, e.g. "fill_fillable_fields.py" or "scripts/office/unpack.py"',
            },
            module: { type: 'string', description: 'Instead of script_name: a Python module of the skill to run with python -m, e.g. "scripts.fill"' },
            args: {
              description:
                'Command-line arguments as an array of strings (sys.argv[1:]), e.g. ["uploads/form.pdf", "outputs/filled.pdf"]; ' +
                'or an object, passed as JSON on stdin',
              anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'object' }],
            },
          },
          required: ['skill_id'],
        },
        'Run skill script',
        forSubagents,
      ),
    ];
  }

  /**
   * Executes a call; never throws: a failure is content starting with "Error: " plus `error`.
   * Nothing it answers names a host path (script output, tracebacks, errors: see redaction.ts).
   */
  async execute(call: ToolCall): Promise<ToolOutcome> {
    const started = Date.now();
    const redactor = await this.d.redaction.forThread(call.tenantId, call.threadId);
    try {
      let args: Record<string, unknown>;
      try {
        // Depth-limited (MAX_JSON_DEPTH): the arguments are serialized again for the script's stdin.
        const v: unknown = call.argsJson.trim() ? parseJsonWithin(call.argsJson, MAX_JSON_DEPTH) : {};
        if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
        args = v as Record<string, unknown>;
      } catch (err) {
        throw new SkillSandboxError('INVALID_ARGUMENT', `Invalid arguments for ${call.toolName}: ${errorMessage(err)}`);
      }
      let content: string;
      if (call.toolName === SKILL_TOOL) content = await this.skill(call, args);
      else if (call.toolName === RUN_SKILL_SCRIPT_TOOL) content = await this.runSkillScript(call, args, redactor);
      else throw new SkillSandboxError('NOT_FOUND', `Unknown tool: ${call.toolName}. The skill sandbox offers ${SKILL_TOOL} and ${RUN_SKILL_SCRIPT_TOOL}`);
      return { content, durationMs: Date.now() - started };
    } catch (err) {
      const error = this.toError(err, redactor);
      return { content: `Error: ${error.message}`, error, durationMs: Date.now() - started };
    }
  }

  /** `skill {skill}`: loads the skill and returns its document without the frontmatter. */
  private async skill(call: ToolCall, args: Record<string, unknown>): Promise<string> {
    const id = typeof args.skill === 'string' ? args.skill.trim() : '';
    if (!id) throw new SkillSandboxError('INVALID_ARGUMENT', 'Invalid arguments for skill: "skill" (the skill id) is required');
    const skill = this.d.catalog.resolve(call.tenantId, id, { subagent: call.subagent });
    const ws = await this.d.workspaces.ensure(call.tenantId, call.threadId);
    const loaded = await loadSkill(ws, skill, this.d.dependencies);
    // Files named in another case (REFERENCE.md for reference.md) are rewritten to the real names.
    const body = resolveSkillLinks(parseSkillDoc(await fs.readFile(skill.docPath, 'utf8'), skill.id).body, new SkillFileIndex(skill.files)).text;
    const note = loaded.dependencies.warning ? `\n\n> Note: ${loaded.dependencies.warning}` : '';
    const tools = skill.allowedTools ? `\n\n> While this skill is active, the run may use only these tools: ${skill.allowedTools.join(', ')}` : '';
    return `# Skill ${skill.name} (${loaded.docPath})\n\n${body}${note}${tools}`;
  }

  /** `run_skill_script {skill_id, script_name | module, args}` (script-call.ts). */
  private async runSkillScript(call: ToolCall, args: Record<string, unknown>, redactor: PathRedactor): Promise<string> {
    const id = typeof args.skill_id === 'string' ? args.skill_id.trim() : '';
    if (!id) throw new SkillSandboxError('INVALID_ARGUMENT', 'Invalid arguments for run_skill_script: "skill_id" is required');
    const skill = this.d.catalog.resolve(call.tenantId, id, { subagent: call.subagent });
    const run = await scriptCall(skill, args);
    const { sandbox, mode } = this.d.isolation;
    // Fail closed: a script runs in bubblewrap, or outside it only where the operator chose that mode explicitly.
    if (!(mode === 'bubblewrap' && sandbox) && mode !== 'unshare' && mode !== 'none') {
      throw new SkillSandboxError('UNAVAILABLE', scriptsUnavailableMessage(this.d.isolation.reason), { retryable: false });
    }
    const ws = await this.d.workspaces.ensure(call.tenantId, call.threadId);
    // A script may rely on the skill being in the workspace and on its dependencies.
    const loaded = await loadSkill(ws, skill, this.d.dependencies);
    let interpreter = process.execPath;
    const python = await this.d.python();
    // Node's and Python's install folders, mounted by the bubblewrap sandbox when outside /usr (the network forwarder is a Python program).
    const interpreterRoots = [path.dirname(path.dirname(process.execPath)), ...(python?.roots ?? [])];
    if (run.kind === 'python') {
      if (!python) {
        throw new SkillSandboxError(
          'UNAVAILABLE',
          `Python 3 (SKILL_PYTHON=${this.d.config.SKILL_PYTHON}) is not installed on the skill sandbox; Python skill scripts cannot run`,
          {
            retryable: false,
          },
        );
      }
      interpreter = python.executable;
    }
    const { config } = this.d;
    const deps = loaded.dependencies;
    const common = {
      kind: run.kind,
      interpreter,
      target: run.target,
      argv: run.argv,
      skillDir: skill.dir,
      workspace: ws.root,
      input: run.input,
      ...(deps.pythonDir ? { pythonPath: deps.pythonDir } : {}),
      ...(deps.nodeModules ? { nodeModules: deps.nodeModules } : {}),
      ...(config.toolbox ? { toolbox: config.toolbox } : {}),
      limits: {
        timeoutMs: config.SKILL_SCRIPT_TIMEOUT_MS,
        maxOutputBytes: config.SKILL_SCRIPT_MAX_OUTPUT_BYTES,
        maxMemoryBytes: config.SKILL_SCRIPT_MAX_MEMORY_MB * 1024 * 1024,
        maxProcesses: config.SKILL_SCRIPT_MAX_PROCESSES,
        maxFileBytes: config.SKILL_SCRIPT_MAX_FILE_MB * 1024 * 1024,
      },
    };
    const nodePermissions = config.SKILL_SCRIPT_NODE_PERMISSIONS && this.d.capabilities.nodePermissions;
    let res: ScriptResult;
    if (mode === 'bubblewrap' && sandbox) {
      res = await runScriptInSandbox(sandbox, { ...common, interpreterRoots, ...(nodePermissions ? { nodePermissions: { readRoots: [] } } : {}) });
    } else {
      res = await runScript({
        ...common,
        capabilities: this.d.capabilities,
        ...(config.SKILL_SCRIPT_NODE_PERMISSIONS ? { nodePermissions: { readRoots: [await this.d.skillsRoot()] } } : {}),
      });
    }
    // Paths inside the bubblewrap sandbox read like the host ones: the workspace, the skill's place in it, the dependency cache.
    const shown = sandbox
      ? redactor.with([
          { path: SANDBOX_WORKSPACE, label: '' },
          { path: SKILL_IN_SANDBOX, label: `skills/${skill.id}` },
          { path: '/skill-deps', label: '<skill-deps>' },
        ])
      : redactor;
    this.d.logger.info(
      {
        tenant: call.tenantId,
        thread_id: call.threadId,
        skill: skill.id,
        script: run.label,
        isolation: this.d.isolation.mode,
        exit: res.exitCode,
        signal: res.signal,
        timed_out: res.timedOut,
      },
      'skill script ran',
    );
    return scriptOutcome({ redact: (t) => shown.redact(t), skill, label: run.label, res, depsWarning: deps.warning, config });
  }

  /** Any failure as the tool protocol's error, its message redacted (the log keeps the original). */
  private toError(err: unknown, redactor: PathRedactor): { code: string; message: string; retryable: boolean } {
    if (err instanceof AgentLoopError) return { code: err.code, message: redactor.redact(err.message), retryable: err.retryable };
    this.d.logger.error({ err: errorMessage(err) }, 'skill tool failed unexpectedly');
    return { code: 'INTERNAL', message: `The skill sandbox failed: ${redactor.redact(errorMessage(err))}`, retryable: false };
  }
}

function spec(name: string, description: string, schema: object, displayName: string, availableToSubagent: boolean): ToolSpec {
  return create(ToolSpecSchema, {
    name,
    description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, { category: 'skills', tags: ['skills'], idempotent: false, displayName, availableToSubagent, enabled: true }),
  });
}
