export { createSkillSandbox, loadSkillSandboxConfig, SkillSandboxEnv, SKILL_SUBJECTS, DEFAULT_SKILLS_ROOT, type SkillSandbox, type SkillSandboxConfig } from './service.js';
export { runScript, resolvePython, type ScriptLimits, type ScriptResult } from './runner.js';
