import { promises as fs } from 'node:fs';
import path from 'node:path';
import { AgentLoopError, errorMessage, MAX_JSON_DEPTH, parseJsonWithin, type Logger, type PathRedactor } from '@agentloop/core';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { formatSkillCatalog, isScriptName, parseSkillDoc, type Skill } from '@agentloop/skills';
import { displayPath, type WorkspaceManager } from '@agentloop/workspace';
import type { SkillCatalog } from './catalog.js';
import type { SkillSandboxConfig } from './config.js';
import type { DependencyInstaller } from './dependencies.js';
import { SkillSandboxError } from './errors.js';
import { loadSkill } from './loader.js';
import type { SandboxRedaction } from './redaction.js';
import { runScript, type PythonInfo, type SandboxCapabilities, type ScriptResult } from './runner.js';

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

export interface SkillToolsDeps {
  catalog: SkillCatalog;
  workspaces: WorkspaceManager;
  dependencies: DependencyInstaller;
  config: SkillSandboxConfig;
  capabilities: SandboxCapabilities;
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
        "Run a script of a skill in an isolated process. The script gets `args` as JSON on stdin, runs in the thread's workspace " +
          '(workspace-relative paths such as uploads/data.csv work) and prints its result. Read the skill (the `skill` tool) first to ' +
          `learn its scripts and their arguments. Scripts stop after ${Math.round(this.d.config.SKILL_SCRIPT_TIMEOUT_MS / 1000)} s.`,
        {
          type: 'object',
          properties: {
            skill_id: { type: 'string', description: 'The skill id, e.g. "csv-stats"' },
            script_name: { type: 'string', description: 'File name of a script in the skill\'s scripts/ folder, e.g. "stats.py"' },
            args: { type: 'object', description: 'Arguments for the script (a JSON object; a JSON string is accepted too)' },
          },
          required: ['skill_id', 'script_name'],
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
    const body = parseSkillDoc(await fs.readFile(skill.docPath, 'utf8'), skill.id).body;
    const note = loaded.dependencies.warning ? `\n\n> Note: ${loaded.dependencies.warning}` : '';
    return `# Skill ${skill.name} (${loaded.docPath})\n\n${body}${note}`;
  }

  /** `run_skill_script {skill_id, script_name, args}`. */
  private async runSkillScript(call: ToolCall, args: Record<string, unknown>, redactor: PathRedactor): Promise<string> {
    const id = typeof args.skill_id === 'string' ? args.skill_id.trim() : '';
    const name = typeof args.script_name === 'string' ? args.script_name.trim() : '';
    if (!id || !name) throw new SkillSandboxError('INVALID_ARGUMENT', 'Invalid arguments for run_skill_script: "skill_id" and "script_name" are required');
    const input = scriptInput(args.args);
    const skill = this.d.catalog.resolve(call.tenantId, id, { subagent: call.subagent });
    const script = await this.scriptPath(skill, name);
    const kind = name.endsWith('.py') ? 'python' : 'node';
    const ws = await this.d.workspaces.ensure(call.tenantId, call.threadId);
    // A script may rely on the skill being in the workspace and on its dependencies.
    const loaded = await loadSkill(ws, skill, this.d.dependencies);
    let interpreter = process.execPath;
    if (kind === 'python') {
      const python = await this.d.python();
      if (!python)
        throw new SkillSandboxError('UNAVAILABLE', 'Python 3 is not installed on the skill sandbox; Python skill scripts cannot run', { retryable: false });
      interpreter = python.executable;
    }
    const { config } = this.d;
    const res = await runScript({
      kind,
      interpreter,
      script,
      workspace: ws.root,
      input,
      capabilities: this.d.capabilities,
      ...(loaded.dependencies.dir ? { pythonPath: loaded.dependencies.dir } : {}),
      ...(config.SKILL_SCRIPT_NODE_PERMISSIONS ? { nodePermissions: { readRoots: [await this.d.skillsRoot()] } } : {}),
      limits: {
        timeoutMs: config.SKILL_SCRIPT_TIMEOUT_MS,
        maxOutputBytes: config.SKILL_SCRIPT_MAX_OUTPUT_BYTES,
        maxMemoryBytes: config.SKILL_SCRIPT_MAX_MEMORY_MB * 1024 * 1024,
        maxProcesses: config.SKILL_SCRIPT_MAX_PROCESSES,
        maxFileBytes: config.SKILL_SCRIPT_MAX_FILE_MB * 1024 * 1024,
      },
    });
    this.d.logger.info(
      { tenant: call.tenantId, thread_id: call.threadId, skill: skill.id, script: name, exit: res.exitCode, signal: res.signal, timed_out: res.timedOut },
      'skill script ran',
    );
    return this.scriptOutcome(redactor, skill, name, res, loaded.dependencies.warning);
  }

  /**
   * The real path of a script: a bare file name listed in the skill's scripts/, still a regular file
   * there (not a symlink) and resolving to exactly that place. No paths, no traversal, no links out.
   * Every name that is not one of the skill's scripts gets the same answer, whatever its shape and
   * whether or not something of that name exists on the host.
   */
  private async scriptPath(skill: Skill, name: string): Promise<string> {
    if (!isScriptName(name) || !skill.scripts.includes(name)) {
      const listing = skill.scripts.join(', ') || '(none)';
      throw new SkillSandboxError(
        'NOT_FOUND',
        `Script not found: ${displayPath(name.slice(0, 200))} is not a script of skill ${skill.id}. Its scripts: ${listing} (give the file name alone, without a path)`,
      );
    }
    const dir = path.join(skill.dir, 'scripts');
    const file = path.join(dir, name);
    const [dirStat, fileStat] = await Promise.all([fs.lstat(dir).catch(() => undefined), fs.lstat(file).catch(() => undefined)]);
    const real = fileStat?.isFile() ? await fs.realpath(file).catch(() => undefined) : undefined;
    if (!dirStat?.isDirectory() || !fileStat?.isFile() || real !== file) {
      throw new SkillSandboxError(
        'NOT_FOUND',
        `Script not found: ${name} of skill ${skill.id} is no longer a regular file in its scripts/ folder; ask an operator to reload the skills`,
      );
    }
    return file;
  }

  /** The script's result for the model, every host path in it redacted (`redactor`: this thread's). */
  private scriptOutcome(redactor: PathRedactor, skill: Skill, name: string, res: ScriptResult, depsWarning: string | undefined): string {
    const { config } = this.d;
    const redact = (t: string) => redactor.redact(t);
    if (res.spawnError) {
      throw new SkillSandboxError('UNAVAILABLE', `Script ${name} of skill ${skill.id} could not be started: ${redact(res.spawnError)}`, { retryable: false });
    }
    if (res.timedOut) {
      throw new SkillSandboxError(
        'TIMEOUT',
        `Script ${name} of skill ${skill.id} did not finish within ${config.SKILL_SCRIPT_TIMEOUT_MS} ms and was stopped (with every process it started)`,
        { retryable: false },
      );
    }
    if (res.exitCode !== 0) {
      const missingPython = /ModuleNotFoundError: No module named '([^']+)'/.exec(res.stderr)?.[1];
      if (missingPython) throw new SkillSandboxError('TOOL_FAILED', redact(missingModuleMessage(skill.id, missingPython, depsWarning)));
      const missingNode = /Cannot find (?:package|module) '([^']+)'/.exec(res.stderr)?.[1];
      if (missingNode && !missingNode.startsWith('/') && !missingNode.startsWith('.')) {
        throw new SkillSandboxError(
          'TOOL_FAILED',
          `Script execution failed: missing dependency: the Node package '${missingNode}' is not available to skill scripts. ` +
            'Node skills cannot declare dependencies: the skill must bundle what it needs in its scripts/ folder.',
        );
      }
      const how = res.exitCode !== null ? `exit ${res.exitCode}` : `signal ${res.signal ?? 'unknown'}${limitHint(res.signal)}`;
      const stderr = redact(res.stderr.trim());
      const tailLines = stderr.split('\n').slice(-20).join('\n').slice(-4000);
      throw new SkillSandboxError('TOOL_FAILED', `script failed (${how}): ${tailLines || '(no error output)'}`);
    }
    const text = redact(res.stdout.trim()) || '(the script printed nothing)';
    return res.stdoutTruncated ? `${text}\n[output truncated at ${config.SKILL_SCRIPT_MAX_OUTPUT_BYTES} bytes]` : text;
  }

  /** Any failure as the tool protocol's error, its message redacted (the log keeps the original). */
  private toError(err: unknown, redactor: PathRedactor): { code: string; message: string; retryable: boolean } {
    if (err instanceof AgentLoopError) return { code: err.code, message: redactor.redact(err.message), retryable: err.retryable };
    this.d.logger.error({ err: errorMessage(err) }, 'skill tool failed unexpectedly');
    return { code: 'INTERNAL', message: `The skill sandbox failed: ${redactor.redact(errorMessage(err))}`, retryable: false };
  }
}

/** `args` as JSON text for stdin: an object as is, a string parsed (it must be JSON), absent as {}. */
function scriptInput(raw: unknown): string {
  if (raw === undefined || raw === null) return '{}';
  if (typeof raw !== 'string') return JSON.stringify(raw);
  if (raw.trim() === '') return '{}';
  try {
    return JSON.stringify(parseJsonWithin(raw, MAX_JSON_DEPTH));
  } catch (err) {
    throw new SkillSandboxError('INVALID_ARGUMENT', `Invalid arguments for run_skill_script: "args" is not valid JSON: ${errorMessage(err)}`);
  }
}

/** Seed 000 §3.5: what is missing and what to do about it. */
function missingModuleMessage(skillId: string, module: string, depsWarning: string | undefined): string {
  return [
    'Script execution failed: missing dependency',
    `The Python module '${module}' is not installed.`,
    'Suggested actions:',
    `1. Check that skills/${skillId}/requirements.txt lists the package that provides '${module}' (it is installed when the skill loads)`,
    `2. Or ask an operator to install it for the skill sandbox: pip install ${module}`,
    '3. Or contact the skill maintainer to add the dependency',
    ...(depsWarning ? [`Note: ${depsWarning}`] : []),
  ].join('\n');
}

function limitHint(signal: NodeJS.Signals | null): string {
  if (signal === 'SIGXCPU') return ', the CPU time limit';
  if (signal === 'SIGXFSZ') return ', the file size limit';
  return '';
}

function spec(name: string, description: string, schema: object, displayName: string, availableToSubagent: boolean): ToolSpec {
  return create(ToolSpecSchema, {
    name,
    description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, { category: 'skills', tags: ['skills'], idempotent: false, displayName, availableToSubagent, enabled: true }),
  });
}
