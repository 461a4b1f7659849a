import { describe, expect, it } from 'vitest';
import type { Skill } from '@agentloop/skills';
import { scriptOutcome } from './script-outcome.js';
import type { ScriptResult } from './runner.js';

const skill = { id: 'docx', hasRequirements: false, files: ['SKILL.md', 'scripts/accept_changes.py', 'scripts/office/soffice.py'] } as unknown as Skill;
const config = { SKILL_SCRIPT_TIMEOUT_MS: 30_000, SKILL_SCRIPT_MAX_OUTPUT_BYTES: 1024 };
const res = (over: Partial<ScriptResult>): ScriptResult => ({
  exitCode: 1,
  signal: null,
  stdout: '',
  stderr: '',
  timedOut: false,
  stdoutTruncated: false,
  stderrTruncated: false,
  ...over,
});
const outcome = (r: ScriptResult) => {
  try {
    return scriptOutcome({ redact: (t) => t, skill, label: 'scripts/x.py', res: r, depsWarning: undefined, config });
  } catch (err) {
    return `Error: ${(err as Error).message}`;
  }
};

describe('scriptOutcome', () => {
  it('quotes the end of both stdout and stderr on failure, each capped', () => {
    const stdout = Array.from({ length: 50 }, (_, i) => `out ${i}`).join('\n');
    const text = outcome(res({ stdout, stderr: 'ValueError: bad\n' }));
    expect(text).toMatch(
      /^Error: Script scripts\/x\.py of skill docx failed \(exit 1\)\n\[stdout, last part\]\nout 20\n[\s\S]*out 49\n\[stderr\]\nValueError: bad$/,
    );
    expect(text).not.toContain('out 19\n');
    expect(outcome(res({}))).toBe('Error: Script scripts/x.py of skill docx failed (exit 1): (no output)');
  });

  it('says a missing module the skill ships is its own, to be imported by running the script by path', () => {
    expect(outcome(res({ stderr: "ModuleNotFoundError: No module named 'office'" }))).toBe(
      "Error: Script execution failed: missing module\nThe module 'office' is part of skill docx (scripts/office), but it is not importable this way.\n" +
        'Run the script by its path (script_name, e.g. "scripts/x.py") so its own folder is importable, as its SKILL.md shows; use `module` only for modules written as part of a package (python -m scripts.x).',
    );
    expect(outcome(res({ stderr: "ModuleNotFoundError: No module named 'pdf2image'" }))).toMatch(
      /^Error: Script execution failed: missing dependency\nThe Python module 'pdf2image' is not installed: skill docx has no requirements\.txt/,
    );
  });

  it('returns stdout on success', () => {
    expect(outcome(res({ exitCode: 0, stdout: 'done\n' }))).toBe('done');
    expect(outcome(res({ exitCode: 0 }))).toBe('(the script printed nothing)');
  });
});
