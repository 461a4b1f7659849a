/**
 * What `run_skill_script` runs, from its arguments (seed 000 §3.7, extended compatibly so the
 * scripts of Anthropic's published skills run unchanged): which file or module of the skill, the
 * command line, and stdin.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorMessage, MAX_JSON_DEPTH, parseJsonWithin } from '@agentloop/core';
import { isScriptName, SkillFileIndex, type Skill } from '@agentloop/skills';
import { displayPath } from '@agentloop/workspace';
import { SkillSandboxError } from './errors.js';

/** Most command-line arguments, and longest one: a script call, not a data channel (use files). */
export const MAX_ARGV = 256;
export const MAX_ARG_CHARS = 8192;
/** A dotted Python module name (`scripts.fill_form`). */
const MODULE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,7}$/;

export interface ScriptCall {
  kind: 'python' | 'node';
  /** The script's real path, or a module of the skill (Python only). */
  target: { script: string } | { module: string };
  /** How the model named it, for messages: `scripts/office/unpack.py` or `-m scripts.fill`. */
  label: string;
  argv: string[];
  /** JSON text when `args` was an object (or JSON text of one), else ''. */
  input: string;
}

/**
 * `args`: an array is the command line (`sys.argv[1:]`; numbers and booleans are written out as
 * text), an object is JSON on stdin (the seed's interface), a string holding JSON of either is
 * read as that, and absent is no argument at all (stdin gets `{}` for the seed's scripts).
 */
export function scriptArguments(raw: unknown): { argv: string[]; input: string } {
  if (raw === undefined || raw === null) return { argv: [], input: '{}' };
  let value: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { argv: [], input: '{}' };
    try {
      value = parseJsonWithin(raw, MAX_JSON_DEPTH);
    } catch (err) {
      throw new SkillSandboxError(
        'INVALID_ARGUMENT',
        `Invalid arguments for run_skill_script: "args" is a string but not JSON (${errorMessage(err)}); ` +
          'pass command-line arguments as an array of strings, e.g. ["uploads/form.pdf", "outputs/filled.pdf"], or an object for JSON on stdin',
      );
    }
  }
  if (Array.isArray(value)) return { argv: argvOf(value), input: '' };
  if (typeof value === 'object' && value !== null) return { argv: [], input: JSON.stringify(value) };
  throw new SkillSandboxError(
    'INVALID_ARGUMENT',
    'Invalid arguments for run_skill_script: "args" must be an array of strings (argv) or an object (JSON on stdin)',
  );
}

function argvOf(values: unknown[]): string[] {
  if (values.length > MAX_ARGV)
    throw new SkillSandboxError('INVALID_ARGUMENT', `Invalid arguments for run_skill_script: "args" has more than ${MAX_ARGV} items`);
  return values.map((v, i) => {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw new SkillSandboxError('INVALID_ARGUMENT', `Invalid arguments for run_skill_script: "args[${i}]" must be a string (or a number or boolean)`);
    }
    const s = String(v);
    if (s.length > MAX_ARG_CHARS || s.includes('\0')) {
      throw new SkillSandboxError(
        'INVALID_ARGUMENT',
        `Invalid arguments for run_skill_script: "args[${i}]" is longer than ${MAX_ARG_CHARS} characters or holds a NUL`,
      );
    }
    return s;
  });
}

/**
 * The script a name designates: a path relative to the skill's scripts/ folder (`fill.py`,
 * `office/unpack.py`), optionally written with the `scripts/` prefix SKILL.md files use, matched
 * case-insensitively when unambiguous. It must be one of the scripts the scan listed (regular
 * files, no symlink on the way), and still resolve to exactly that place: nothing outside the
 * skill's folder runs. Every other name gets the same answer, whether or not it exists on the host.
 */
export async function resolveScript(skill: Skill, name: string): Promise<string> {
  const wanted = name.replace(/\\/g, '/').replace(/^\.\//, '');
  const rel = new SkillFileIndex(skill.scripts).resolve(wanted.replace(/^scripts\//i, ''));
  if (rel === undefined || !isScriptName(rel)) {
    throw new SkillSandboxError(
      'NOT_FOUND',
      `Script not found: ${displayPath(name.slice(0, 200))} is not a script of skill ${skill.id}. Its scripts (under scripts/): ${skill.scripts.join(', ') || '(none)'}`,
    );
  }
  const file = path.join(skill.dir, 'scripts', ...rel.split('/'));
  const st = await fs.lstat(file).catch(() => undefined);
  const real = st?.isFile() ? await fs.realpath(file).catch(() => undefined) : undefined;
  if (real !== file) {
    throw new SkillSandboxError(
      'NOT_FOUND',
      `Script not found: scripts/${rel} of skill ${skill.id} is no longer a regular file in the skill; ask an operator to reload the skills`,
    );
  }
  return file;
}

/**
 * A Python module of the skill for `python -m` (`scripts.fill_form`): it must be a module file
 * (`scripts/fill_form.py`) or a package with `__main__.py` inside the skill's folder, so only the
 * skill's own code runs this way.
 */
export function resolveModule(skill: Skill, module: string): string {
  const name = module.trim();
  const rel = name.split('.').join('/');
  if (!MODULE_PATTERN.test(name) || !(skill.files.includes(`${rel}.py`) || skill.files.includes(`${rel}/__main__.py`))) {
    const modules = skill.files.filter((f) => f.endsWith('.py') && !f.endsWith('__init__.py')).map((f) => f.slice(0, -3).replace(/\//g, '.'));
    throw new SkillSandboxError(
      'NOT_FOUND',
      `Module not found: ${displayPath(name.slice(0, 200))} is not a Python module of skill ${skill.id}. Its modules: ${modules.slice(0, 50).join(', ') || '(none)'}`,
    );
  }
  return name;
}

/** The call's target and command line from the tool arguments (`script_name` or `module`, and `args`). */
export async function scriptCall(skill: Skill, args: Record<string, unknown>): Promise<ScriptCall> {
  const name = typeof args.script_name === 'string' ? args.script_name.trim() : '';
  const module = typeof args.module === 'string' ? args.module.trim() : '';
  if ((name === '') === (module === '')) {
    throw new SkillSandboxError(
      'INVALID_ARGUMENT',
      'Invalid arguments for run_skill_script: give either "script_name" (a file under scripts/) or "module" (python -m)',
    );
  }
  const { argv, input } = scriptArguments(args.args);
  if (module) return { kind: 'python', target: { module: resolveModule(skill, module) }, label: `-m ${module}`, argv, input };
  const script = await resolveScript(skill, name);
  const rel = path.relative(path.join(skill.dir, 'scripts'), script).split(path.sep).join('/');
  return { kind: rel.endsWith('.py') ? 'python' : 'node', target: { script }, label: `scripts/${rel}`, argv, input };
}
