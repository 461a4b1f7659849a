export { createSkillSandbox, SKILL_SUBJECTS, SKILL_SANDBOX_SERVICE, SKILL_SANDBOX_VERSION, type SkillSandbox, type SkillSandboxDeps } from './service.js';
export { loadSkillSandboxConfig, SkillSandboxEnv, DEFAULT_SKILLS_ROOT, DEFAULT_SKILLS_CONFIG, type SkillSandboxConfig } from './config.js';
export { SkillSandboxError } from './errors.js';
export { SKILL_TOOL, RUN_SKILL_SCRIPT_TOOL } from './tools.js';
export type { ReloadResult } from './catalog.js';
export {
  runScript,
  runIsolated,
  resolvePython,
  probePython,
  probeCapabilities,
  UNSHARE_ARGS,
  type ScriptRun,
  type ScriptLimits,
  type ScriptResult,
  type ProcessResult,
  type ResourceLimits,
  type SandboxCapabilities,
  type PythonInfo,
} from './runner.js';
