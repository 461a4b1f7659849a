import type { Skill } from '@agentloop/skills';
import type { SkillSandboxConfig } from './config.js';
import { SkillSandboxError } from './errors.js';
import type { ScriptResult } from './runner.js';

/** How much of each stream a failure message quotes: the end, where usage text and tracebacks are. */
export const FAILURE_TAIL_LINES = 30;
export const FAILURE_TAIL_CHARS = 3000;

export interface OutcomeInput {
  /** Host paths → logical names (redaction.ts). */
  redact: (text: string) => string;
  skill: Skill;
  /** The script as the model named it (`scripts/fill.py`, `-m scripts.fill`). */
  label: string;
  res: ScriptResult;
  depsWarning: string | undefined;
  config: Pick<SkillSandboxConfig, 'SKILL_SCRIPT_TIMEOUT_MS' | 'SKILL_SCRIPT_MAX_OUTPUT_BYTES'>;
}

/**
 * The script's result for the model: its stdout on success; on failure an error quoting the end of
 * both stdout and stderr (a script's usage text is often printed on stdout, its traceback on
 * stderr), each capped. Every host path is redacted.
 */
export function scriptOutcome({ redact, skill, label, res, depsWarning, config }: OutcomeInput): string {
  if (res.spawnError) {
    throw new SkillSandboxError('UNAVAILABLE', `Script ${label} of skill ${skill.id} could not be started: ${redact(res.spawnError)}`, { retryable: false });
  }
  if (res.timedOut) {
    throw new SkillSandboxError(
      'TIMEOUT',
      `Script ${label} of skill ${skill.id} did not finish within ${config.SKILL_SCRIPT_TIMEOUT_MS} ms and was stopped (with every process it started)`,
      { retryable: false },
    );
  }
  if (res.exitCode !== 0) {
    const missingPython = /ModuleNotFoundError: No module named '([^']+)'/.exec(res.stderr)?.[1];
    if (missingPython) throw new SkillSandboxError('TOOL_FAILED', redact(missingModuleMessage(skill, missingPython, depsWarning)));
    const missingNode = /Cannot find (?:package|module) '([^']+)'/.exec(res.stderr)?.[1];
    if (missingNode && !missingNode.startsWith('/') && !missingNode.startsWith('.')) {
      throw new SkillSandboxError(
        'TOOL_FAILED',
        `Script execution failed: missing dependency: the Node package '${missingNode}' is not installed for skill ${skill.id}. ` +
          `Declare it in skills/${skill.id}/package.json (installed when the skill loads)${depsWarning ? `. Note: ${depsWarning}` : ''}`,
      );
    }
    const status = res.exitCode !== null ? `exit ${res.exitCode}` : `signal ${res.signal ?? 'unknown'}${limitHint(res.signal)}`;
    const how = res.limit ? `${status}, ${res.limit}` : status;
    const parts = [streamTail('stdout', redact(res.stdout), res.stdoutTruncated), streamTail('stderr', redact(res.stderr), res.stderrTruncated)].filter(
      Boolean,
    );
    throw new SkillSandboxError(
      'TOOL_FAILED',
      `Script ${label} of skill ${skill.id} failed (${how})${parts.length ? `\n${parts.join('\n')}` : ': (no output)'}`,
    );
  }
  const text = redact(res.stdout.trim()) || '(the script printed nothing)';
  return res.stdoutTruncated ? `${text}\n[output truncated at ${config.SKILL_SCRIPT_MAX_OUTPUT_BYTES} bytes]` : text;
}

function streamTail(name: string, text: string, truncated: boolean): string {
  const trimmed = text.trim();
  if (!trimmed) return '';
  const lines = trimmed.split('\n');
  let tail = lines.slice(-FAILURE_TAIL_LINES).join('\n');
  if (tail.length > FAILURE_TAIL_CHARS) tail = tail.slice(-FAILURE_TAIL_CHARS);
  const cut = tail.length < trimmed.length || truncated;
  return `[${name}${cut ? ', last part' : ''}]\n${tail}`;
}

/** Seed 000 §3.5: what is missing and what to do about it. */
function missingModuleMessage(skill: Skill, module: string, depsWarning: string | undefined): string {
  const top = module.split('.')[0] ?? module;
  // A module the skill ships (scripts/office/ for `from office import x`): the script expects its own folder on sys.path.
  const own = skill.files.find((f) => f.endsWith(`/${top}.py`) || f.includes(`/${top}/`) || f.startsWith(`${top}/`) || f === `${top}.py`);
  if (own) {
    const segments = own.split('/');
    const at = segments.findIndex((seg) => seg === top || seg === `${top}.py`);
    const where = segments.slice(0, at + 1).join('/');
    return [
      'Script execution failed: missing module',
      `The module '${module}' is part of skill ${skill.id} (${where}), but it is not importable this way.`,
      'Run the script by its path (script_name, e.g. "scripts/x.py") so its own folder is importable, as its SKILL.md shows; ' +
        'use `module` only for modules written as part of a package (python -m scripts.x).',
    ].join('\n');
  }
  const declared = skill.hasRequirements
    ? `skills/${skill.id}/requirements.txt does not provide it (or could not be installed)`
    : `skill ${skill.id} has no requirements.txt, so nothing was installed for it`;
  return [
    'Script execution failed: missing dependency',
    `The Python module '${module}' is not installed: ${declared}.`,
    'Suggested actions:',
    `1. If the skill's instructions name a package, check the sandbox's toolbox (docs/skills-ecosystem.md) or add it to skills/${skill.id}/requirements.txt`,
    `2. Or ask an operator to install it for the skill sandbox (SKILL_PYTHON): pip install ${module}`,
    '3. Or contact the skill maintainer to declare the dependency',
    ...(depsWarning ? [`Note: ${depsWarning}`] : []),
  ].join('\n');
}

function limitHint(signal: NodeJS.Signals | null): string {
  if (signal === 'SIGXCPU') return ', the CPU time limit';
  if (signal === 'SIGXFSZ') return ', the file size limit';
  return '';
}
