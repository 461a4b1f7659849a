import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { envBool, envInt, parseConfig } from '@agentloop/core';
import { parseAllowList } from '@agentloop/net';
import { toolboxFromEnv } from '@agentloop/sandbox';

/** The project's skills folder (`<repo>/skills`), resolved from src/ or dist/ like the tool-runner's tools.yaml. */
export const DEFAULT_SKILLS_ROOT = fileURLToPath(new URL('../../../skills', import.meta.url));

/** skills.yaml shipped with this service (config/skills.yaml). */
export const DEFAULT_SKILLS_CONFIG = fileURLToPath(new URL('../config/skills.yaml', import.meta.url));

/** Environment of the skill sandbox, validated once at boot. */
export const SkillSandboxEnv = z
  .object({
    NATS_URL: z.string().optional(),
    LOG_LEVEL: z.string().default('info'),
    /** Root of `<tenant>/<thread>/` workspaces, shared with the tool-runner (same volume). */
    WORKSPACE_ROOT: z.string().min(1).default('./data/workspaces'),
    /**
     * Skill packages: one folder per skill with SKILL.md. Default: the project's skills/. The
     * tool-runner and the indexer must be given the same SKILLS_ROOT to read through the links.
     */
    SKILLS_ROOT: z.string().min(1).optional(),
    /** skills.yaml. Default: config/skills.yaml of this package. */
    SKILLS_CONFIG: z.string().min(1).optional(),
    /** Where skill dependencies are installed (`<cache>/<skill>@<version>-<hash>/{python,node}`). Default: <WORKSPACE_ROOT>/../.skill-deps. */
    SKILLS_CACHE: z.string().min(1).optional(),
    /** Re-scan SKILLS_ROOT and skills.yaml when they change (fs.watch, debounced). */
    SKILLS_WATCH: envBool(false),
    SKILLS_WATCH_DEBOUNCE_MS: envInt(300, 10, 60_000),
    /** Python of .py scripts and of per-skill pip installs (the real interpreter is resolved once at start). Default: the toolbox's, else python3. */
    SKILL_PYTHON: z.string().min(1).optional(),
    /** The skills toolbox (deploy/skills-toolbox/install.sh): its Python, commands and Node packages for scripts (docs/skills-ecosystem.md). */
    SKILLS_TOOLBOX: z.string().min(1).optional(),
    /** A script still running after this long is killed with its process group. */
    SKILL_SCRIPT_TIMEOUT_MS: envInt(30_000, 100, 3_600_000),
    /** stdout and stderr are each kept up to this many bytes; the rest is dropped with a note. */
    SKILL_SCRIPT_MAX_OUTPUT_BYTES: envInt(1024 * 1024, 1024, 64 * 1024 * 1024),
    /** Address space of a script (prlimit --as), and the V8 heap cap of Node scripts. 0: no limit. */
    SKILL_SCRIPT_MAX_MEMORY_MB: envInt(1024, 0, 65_536),
    /** Processes/threads of the service's user while a script runs (prlimit --nproc; not enforced for root). 0: no limit. */
    SKILL_SCRIPT_MAX_PROCESSES: envInt(256, 0, 1_000_000),
    /** Largest file a script may write (prlimit --fsize). 0: no limit. */
    SKILL_SCRIPT_MAX_FILE_MB: envInt(1024, 0, 1_048_576),
    /**
     * How scripts are isolated (README "Skills"). auto: bubblewrap (libs/sandbox: every namespace, only
     * the thread's workspace writable and no other workspace visible, cgroup caps), and where bwrap
     * cannot run here, no script runs at all (the call fails saying why; SKILL.md and skills without
     * scripts still work): scripts never silently lose their isolation. namespaces: bubblewrap, else
     * unshare (own user, network and PID namespaces, but the service's file system: every workspace on
     * the volume and its .agentloop/ readable and writable), else the service does not start. none: neither, trusted skills only.
     */
    SKILL_SCRIPT_ISOLATION: z.enum(['auto', 'namespaces', 'none']).default('auto'),
    /**
     * Run scripts in bubblewrap (libs/sandbox) or refuse to start (k8s/overlays/skill-scripts sets it, so
     * a pod that cannot run bwrap fails its rollout instead of serving skills whose scripts all fail).
     */
    SKILL_SANDBOX_REQUIRE_BWRAP: envBool(false),
    /**
     * Destinations skill scripts may reach over HTTP(S) through the sandbox's proxy (the HTTP_FETCH_ALLOW
     * syntax); empty: no network. Separate from the code tools' SANDBOX_NETWORK_ALLOW.
     */
    SKILL_NETWORK_ALLOW: z
      .string()
      .default('')
      .superRefine((text, ctx) => {
        try {
          parseAllowList(text, 'SKILL_NETWORK_ALLOW');
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
        }
      }),
    /** unshare(1) for SKILL_SCRIPT_ISOLATION=namespaces without bubblewrap. Default: the first of /usr/bin, /bin, /usr/sbin, /sbin that has it. */
    SKILL_UNSHARE: z.string().min(1).optional(),
    /** Shared with the code tools (libs/sandbox, README "Code sandbox"): the bwrap binary and where per-script cgroups go. */
    SANDBOX_BWRAP: z.string().optional(),
    SANDBOX_CGROUP_ROOT: z.string().optional(),
    SANDBOX_CGROUP_PARENT: z.string().optional(),
    SANDBOX_REQUIRE_CGROUP: z.string().optional(),
    /** CPU quota of a script's cgroup in cores; unset: no quota. */
    SKILL_SCRIPT_CPUS: z.coerce.number().min(0.01).max(1024).optional(),
    /** Node scripts run under Node's permission model: read the workspace and SKILLS_ROOT, write the workspace, no child processes. */
    SKILL_SCRIPT_NODE_PERMISSIONS: envBool(true),
    /** Budget of one `pip install` of a requirements.txt (seed 000 §3.5: 120 s). */
    SKILL_DEPS_TIMEOUT_MS: envInt(120_000, 1_000, 3_600_000),
    /** pip installs wheels only (no setup.py of a source package runs at install time). */
    SKILL_DEPS_BINARY_ONLY: envBool(true),
  })
  .transform((c, ctx) => {
    let toolbox;
    try {
      toolbox = toolboxFromEnv({ SKILLS_TOOLBOX: c.SKILLS_TOOLBOX });
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['SKILLS_TOOLBOX'], message: (err as Error).message });
      return z.NEVER;
    }
    return {
      ...c,
      SKILL_PYTHON: c.SKILL_PYTHON ?? toolbox?.python ?? 'python3',
      ...(toolbox ? { toolbox } : {}),
      SKILLS_CACHE: c.SKILLS_CACHE ?? path.join(path.resolve(c.WORKSPACE_ROOT), '..', '.skill-deps'),
    };
  });
export type SkillSandboxConfig = z.infer<typeof SkillSandboxEnv>;

/** Parses the sandbox's environment; throws a ConfigError naming each bad variable. */
export function loadSkillSandboxConfig(env: NodeJS.ProcessEnv = process.env): SkillSandboxConfig {
  return parseConfig(SkillSandboxEnv, env);
}
