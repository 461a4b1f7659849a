import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllowList } from '@agentloop/net';
import { Sandbox, sandboxConfigFromEnv, type SandboxConfig } from '@agentloop/sandbox';
import type { SkillSandboxConfig } from './config.js';

/**
 * How skill scripts are isolated on this replica (README "Skills"). `unavailable`: no script runs
 * (SKILL_SCRIPT_ISOLATION=auto where bubblewrap cannot run, or before the service started).
 */
export type IsolationMode = 'bubblewrap' | 'unshare' | 'none' | 'unavailable';

/** Why no script runs in `unavailable` mode: said to the model as the tool's error (and by it to the user). */
export function scriptsUnavailableMessage(reason: string | undefined): string {
  return (
    `Skill scripts are disabled on this skill sandbox: they run only in bubblewrap, and ${reason ?? 'the service has not started'}. ` +
    "The skill's instructions still apply: do the work with the other tools, or tell the user that the operator must enable bubblewrap for skill scripts."
  );
}

/**
 * The same for the operator, in the start-up log: what can be changed. Not given to the model, which
 * would pass on to users how to weaken the deployment's isolation.
 */
export function scriptsUnavailableAdvice(reason: string): string {
  return (
    `skill scripts are disabled: they run only in bubblewrap, and ${reason}. Install bubblewrap and allow unprivileged user ` +
    'namespaces (README "Code sandbox"), or, for trusted skills only, set SKILL_SCRIPT_ISOLATION=namespaces (unshare: no network, ' +
    'but scripts read and write every workspace on this volume and its .agentloop/ records) or none'
  );
}

/** Stands for "no limit" where the skill configuration says 0 (libs/sandbox wants every limit set). */
const UNLIMITED_BYTES = 1024 ** 4;
const UNLIMITED_PROCESSES = 100_000;
const MIB = 1024 * 1024;

/**
 * libs/sandbox's configuration for skill scripts: the bubblewrap binary and cgroup placement from the
 * shared SANDBOX_* variables (SANDBOX_BWRAP, SANDBOX_CGROUP_ROOT, SANDBOX_CGROUP_PARENT,
 * SANDBOX_REQUIRE_CGROUP), the limits from SKILL_SCRIPT_*, the network from SKILL_NETWORK_ALLOW,
 * and the skill interpreter for the network forwarder.
 */
export function skillSandboxConfig(config: SkillSandboxConfig, pythonExecutable: string | undefined): SandboxConfig {
  // Only these of the code tools' variables apply: their network and limits are not the skills'.
  const shared = sandboxConfigFromEnv({
    SANDBOX_BWRAP: config.SANDBOX_BWRAP,
    SANDBOX_CGROUP_ROOT: config.SANDBOX_CGROUP_ROOT,
    SANDBOX_CGROUP_PARENT: config.SANDBOX_CGROUP_PARENT,
    SANDBOX_REQUIRE_CGROUP: config.SANDBOX_REQUIRE_CGROUP,
  });
  // The toolbox comes from the skill configuration (already checked), mounted into every script's sandbox.
  delete shared.toolbox;
  if (config.toolbox) shared.toolbox = config.toolbox;
  const bytes = (mb: number) => (mb > 0 ? mb * MIB : UNLIMITED_BYTES);
  return {
    ...shared,
    enabled: true,
    pythonPath: pythonExecutable ?? shared.pythonPath,
    extraReadOnlyPaths: [],
    networkAllow: parseAllowList(config.SKILL_NETWORK_ALLOW, 'SKILL_NETWORK_ALLOW'),
    ...(config.SKILL_SCRIPT_CPUS !== undefined ? { cpus: config.SKILL_SCRIPT_CPUS } : {}),
    limits: {
      wallTimeMs: config.SKILL_SCRIPT_TIMEOUT_MS,
      memoryBytes: bytes(config.SKILL_SCRIPT_MAX_MEMORY_MB),
      // Inherited by every process: even one that left the process group cannot spin for long.
      cpuSeconds: Math.ceil(config.SKILL_SCRIPT_TIMEOUT_MS / 1000) + 1,
      maxProcesses: config.SKILL_SCRIPT_MAX_PROCESSES > 0 ? config.SKILL_SCRIPT_MAX_PROCESSES : UNLIMITED_PROCESSES,
      maxFileBytes: bytes(config.SKILL_SCRIPT_MAX_FILE_MB),
      // libs/sandbox caps both streams together; the skill setting is per stream.
      maxOutputBytes: config.SKILL_SCRIPT_MAX_OUTPUT_BYTES * 2,
    },
  };
}

/**
 * Why bubblewrap cannot run scripts here, or undefined when it can: the binaries checked, then one
 * real run of `true` in a throw-away workspace (a container without user namespaces fails there).
 * Probed without the network proxy: its forwarder needs the interpreter mounts a script run brings.
 */
export async function bubblewrapUnavailable(config: SandboxConfig): Promise<string | undefined> {
  const probe = new Sandbox({ ...config, networkAllow: [] });
  const missing = await probe.unavailableReason();
  if (missing) return missing;
  const workspace = await mkdtemp(path.join(tmpdir(), 'agentloop-bwrap-probe-'));
  try {
    const res = await probe.run({ workspaceDir: workspace, argv: ['true'], limits: { wallTimeMs: 10_000 } });
    if (res.exitCode === 0) return undefined;
    return `bwrap cannot create its namespaces here: ${res.stderr.trim() || `exit ${res.exitCode ?? res.signal ?? 'unknown'}`}`;
  } catch (err) {
    return `bwrap cannot run: ${(err as Error).message}`;
  } finally {
    await probe.close();
    await rm(workspace, { recursive: true, force: true });
  }
}
