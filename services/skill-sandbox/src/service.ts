import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { SKILL_SANDBOX_RPC, SKILL_TOOLS_RPC, replicaInstance, serveClusterReload, serveService, type Bus, type Subscription } from '@agentloop/bus';
import { ConfigError, errorMessage, type Logger } from '@agentloop/core';
import { SKILL_CATALOG_SUBJECT, type Skill } from '@agentloop/skills';
import { Sandbox, type SandboxConfig } from '@agentloop/sandbox';
import { WorkspaceManager } from '@agentloop/workspace';
import { SkillCatalog, type ReloadResult } from './catalog.js';
import { DEFAULT_SKILLS_CONFIG, DEFAULT_SKILLS_ROOT, type SkillSandboxConfig } from './config.js';
import { DependencyInstaller } from './dependencies.js';
import { executeTool } from './handlers/execute-tool.js';
import { listSkills } from './handlers/list-skills.js';
import { listTools } from './handlers/list-tools.js';
import { loadSkillMethod } from './handlers/load-skill.js';
import { skillReloads } from './handlers/reload.js';
import { skillCatalogHandler } from './handlers/skill-catalog.js';
import { SandboxRedaction } from './redaction.js';
import { probeCapabilities, probePython, type PythonInfo, type SandboxCapabilities } from './runner.js';
import { bubblewrapUnavailable, scriptsUnavailableAdvice, skillSandboxConfig, type IsolationMode } from './script-isolation.js';
import { SkillTools, type ScriptIsolation } from './tools.js';

/**
 * NATS subjects of the skill sandbox (queue group SKILL_SANDBOX_SERVICE, except the broadcast): its RPCs'
 * as declared once in SKILL_SANDBOX_RPC and SKILL_TOOLS_RPC (@agentloop/bus), and its reload broadcast.
 */
export const SKILL_SUBJECTS = {
  /** ListSkillsRequest → ListSkillsResponse. */
  list: SKILL_SANDBOX_RPC.methods.listSkills.subject,
  /** LoadSkillRequest → LoadSkillResponse. */
  load: SKILL_SANDBOX_RPC.methods.loadSkill.subject,
  /** ReloadSkillsRequest → ReloadSkillsResponse. */
  reload: SKILL_SANDBOX_RPC.methods.reloadSkills.subject,
  /** ReloadSkillsRequest, published to every replica (no queue group, no reply). */
  reloadBroadcast: `${SKILL_SANDBOX_RPC.methods.reloadSkills.subject}.broadcast`,
  /** Tool protocol: ListToolsRequest → ListToolsResponse. */
  toolsList: SKILL_TOOLS_RPC.methods.listTools.subject,
  /** Tool protocol: ExecuteToolRequest → ExecuteToolResponse. */
  toolsExecute: SKILL_TOOLS_RPC.methods.executeTool.subject,
  /** JSON: SkillCatalogRequest → SkillCatalogResponse (handlers/skill-catalog.ts), for the orchestrator. */
  catalog: SKILL_CATALOG_SUBJECT,
} as const;

/** Queue group and NATS micro-service name. */
export const SKILL_SANDBOX_SERVICE = SKILL_SANDBOX_RPC.queue;

/** From package.json; src/ and dist/ are both one level below it. */
export const SKILL_SANDBOX_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface SkillSandboxDeps {
  bus: Bus;
  logger: Logger;
  config: SkillSandboxConfig;
}

export interface SkillSandbox {
  /** Loads skills.yaml (a bad file throws a ConfigError), scans the skills and serves the subjects. */
  start(): Promise<void>;
  /** Stops serving and watching. Idempotent. */
  stop(): Promise<void>;
  /** Re-reads skills.yaml and re-scans SKILLS_ROOT on this replica. */
  reload(reason?: string): Promise<ReloadResult>;
  /** The skills found by the latest scan (governance not applied). */
  readonly skills: readonly Skill[];
  /** What the script sandbox can enforce on this machine. */
  readonly capabilities: SandboxCapabilities;
  /** How scripts run here, decided at start: bubblewrap, unshare + prlimit, neither, or not at all; `reason` says why not bubblewrap. */
  readonly isolation: { readonly mode: IsolationMode; readonly reason?: string };
}

/**
 * The skill sandbox (seed 000 Part 3, seed 002): the skill registry and skills.yaml governance
 * (per-tenant allowlists, version pins), loading skills into thread workspaces with their Python
 * dependencies, and the `skill` / `run_skill_script` tools over the tool protocol, so the
 * orchestrator treats it as one more tool provider.
 */
export function createSkillSandbox({ bus, logger: baseLogger, config }: SkillSandboxDeps): SkillSandbox {
  const logger = baseLogger.child({ component: 'skill-sandbox' });
  const root = path.resolve(config.SKILLS_ROOT ?? DEFAULT_SKILLS_ROOT);
  const configPath = config.SKILLS_CONFIG ?? DEFAULT_SKILLS_CONFIG;
  const replica = replicaInstance();
  // Probed at start; the tools read this same object.
  const capabilities: SandboxCapabilities = { prlimit: undefined, processLimitEnforced: false, nodePermissions: false, unshare: undefined };
  // No script runs until start decides how (fail closed).
  const isolation: ScriptIsolation = { mode: 'unavailable', reason: 'the skill sandbox has not started' };
  const catalog = new SkillCatalog({ root, configPath, logger });
  const workspaces = new WorkspaceManager({ root: config.WORKSPACE_ROOT, skillRoots: [root], logger });
  // No host path leaves the sandbox: every answer is redacted with this (redaction.ts).
  const redaction = new SandboxRedaction({ workspaceRoot: config.WORKSPACE_ROOT, skillsRoot: root, cacheRoot: config.SKILLS_CACHE, workspaces });
  let pythonProbe: Promise<PythonInfo | undefined> | undefined;
  const python = () => (pythonProbe ??= probePython(config.SKILL_PYTHON));
  const dependencies = new DependencyInstaller({
    cacheRoot: config.SKILLS_CACHE,
    python,
    timeoutMs: config.SKILL_DEPS_TIMEOUT_MS,
    binaryOnly: config.SKILL_DEPS_BINARY_ONLY,
    logger,
    redact: (text) => redaction.base.redact(text),
  });
  const tools = new SkillTools({
    catalog,
    workspaces,
    dependencies,
    config,
    capabilities,
    isolation,
    python,
    skillsRoot: () => realpath(root).catch(() => root),
    redaction,
    logger,
  });
  const reload = async (reason = 'reload') => {
    dependencies.forgetFailures();
    return catalog.reload(reason);
  };
  let subs: Subscription[] = [];
  let stopWatching: (() => void) | undefined;

  return {
    get skills() {
      return catalog.skills;
    },
    capabilities,
    isolation,
    reload,
    async start() {
      if (subs.length > 0) return;
      await catalog.reload('start');
      // Only SKILL_SCRIPT_ISOLATION=namespaces may run scripts under unshare: nothing else needs the probe.
      const namespaces = config.SKILL_SCRIPT_ISOLATION === 'namespaces';
      Object.assign(capabilities, await probeCapabilities({ namespaces, ...(config.SKILL_UNSHARE ? { unshare: config.SKILL_UNSHARE } : {}) }));
      const py = await python();
      await chooseIsolation(config, py, capabilities, isolation, logger);
      logger.info(
        {
          skills_root: root,
          python: py?.executable ?? null,
          isolation: isolation.mode,
          prlimit: capabilities.prlimit ?? null,
          // In bubblewrap the sandbox's own status says it: `limits` (cgroup or prlimit only) and `network`.
          ...(isolation.sandbox ? {} : { process_limit_enforced: capabilities.processLimitEnforced }),
          node_permissions: capabilities.nodePermissions && config.SKILL_SCRIPT_NODE_PERMISSIONS,
          ...(isolation.sandbox ? await isolation.sandbox.status() : {}),
        },
        'script sandbox capabilities',
      );
      // No host path leaves the sandbox: every error message is redacted too.
      const opts = {
        logger,
        version: SKILL_SANDBOX_VERSION,
        description: 'AgentLoop skills: registry, loading, scripts',
        redact: (text: string) => redaction.base.redact(text),
      };
      try {
        const reloads = skillReloads({ reload, bus, logger, replica, broadcastSubject: SKILL_SUBJECTS.reloadBroadcast });
        const skills = {
          listSkills: listSkills(catalog),
          loadSkill: loadSkillMethod({ catalog, workspaces, dependencies, redaction, logger }),
          reloadSkills: reloads.method,
        };
        subs.push(await serveService(bus, SKILL_SANDBOX_RPC, skills, opts));
        subs.push(await serveService(bus, SKILL_TOOLS_RPC, { listTools: listTools(tools, logger), executeTool: executeTool(tools) }, opts));
        subs.push(await bus.subscribe(SKILL_SUBJECTS.reloadBroadcast, reloads.broadcastHandler));
        subs.push(await bus.serve(SKILL_SUBJECTS.catalog, { queue: SKILL_SANDBOX_SERVICE, version: SKILL_SANDBOX_VERSION }, skillCatalogHandler(catalog)));
        // POST /admin/reload: every replica re-scans its skills and answers (libs/bus cluster-reload.ts).
        subs.push(
          await serveClusterReload(bus, {
            service: SKILL_SANDBOX_SERVICE,
            instance: replica,
            logger,
            reload: async (reason) => {
              const res = await reload(reason);
              if (res.configError) throw new Error(`skills.yaml not reloaded, the previous configuration stays in force: ${res.configError}`);
              return { skills: res.skills, skipped: res.skipped };
            },
          }),
        );
      } catch (err) {
        await this.stop();
        throw err;
      }
      if (config.SKILLS_WATCH) stopWatching = watchSkills(root, configPath, config.SKILLS_WATCH_DEBOUNCE_MS, reload, logger);
      logger.info({ version: SKILL_SANDBOX_VERSION, skills: catalog.skills.length }, 'skill-sandbox serving');
    },
    async stop() {
      await isolation.sandbox?.close();
      // A stopped service runs no script; a later start decides again (fail closed in between).
      Object.assign(isolation, { mode: 'unavailable', reason: 'the skill sandbox has stopped', sandbox: undefined });
      stopWatching?.();
      stopWatching = undefined;
      const current = subs;
      subs = [];
      await Promise.allSettled(current.map((s) => s.unsubscribe()));
      if (current.length > 0) logger.info('skill-sandbox stopped');
    },
  };
}

/**
 * Decides how scripts run (README "Skills"): bubblewrap when it can create its namespaces here.
 * Otherwise, by SKILL_SCRIPT_ISOLATION: auto refuses every script (the service and everything but
 * scripts keep working), because without bubblewrap a script sees the service's whole file system,
 * every tenant's workspace on the volume and `<WORKSPACE_ROOT>/.agentloop/` included; namespaces
 * (the operator's explicit choice) runs them under unshare + prlimit, or refuses to start without
 * unshare; none runs neither. SKILL_SANDBOX_REQUIRE_BWRAP=true refuses to start without bubblewrap.
 */
async function chooseIsolation(
  config: SkillSandboxConfig,
  python: PythonInfo | undefined,
  capabilities: SandboxCapabilities,
  isolation: ScriptIsolation,
  logger: Logger,
): Promise<void> {
  const refuse = (why: string): never => {
    throw new ConfigError(`Invalid configuration:\n  ${why}`);
  };
  if (config.SKILL_SCRIPT_ISOLATION === 'none') {
    if (config.SKILL_SANDBOX_REQUIRE_BWRAP) refuse('SKILL_SANDBOX_REQUIRE_BWRAP=true contradicts SKILL_SCRIPT_ISOLATION=none');
    Object.assign(isolation, { mode: 'none', reason: 'SKILL_SCRIPT_ISOLATION=none' });
    logger.warn(
      'SKILL_SCRIPT_ISOLATION=none: skill scripts run without namespaces, with network access, sight of this service and of every workspace on this volume',
    );
    return;
  }
  let sandboxConfig: SandboxConfig;
  try {
    sandboxConfig = skillSandboxConfig(config, python?.executable);
  } catch (err) {
    return refuse(errorMessage(err));
  }
  const reason = await bubblewrapUnavailable(sandboxConfig);
  if (reason === undefined) {
    Object.assign(isolation, { mode: 'bubblewrap', sandbox: new Sandbox(sandboxConfig), reason: undefined });
    return;
  }
  if (config.SKILL_SANDBOX_REQUIRE_BWRAP) refuse(`SKILL_SANDBOX_REQUIRE_BWRAP: skill scripts must run in bubblewrap, but ${reason}`);
  if (config.SKILL_SCRIPT_ISOLATION === 'auto') {
    Object.assign(isolation, { mode: 'unavailable', reason });
    logger.error({ reason }, scriptsUnavailableAdvice(reason));
    return;
  }
  if (!capabilities.unshare) {
    refuse(`SKILL_SCRIPT_ISOLATION: namespaces are required but neither bubblewrap (${reason}) nor unshare(1) can create them here`);
  }
  Object.assign(isolation, { mode: 'unshare', reason });
  logger.warn(
    { reason },
    'SKILL_SCRIPT_ISOLATION=namespaces: skill scripts run without bubblewrap, in unshare namespaces with prlimit limits: no network, ' +
      'but they read the file system as this service does (every workspace on this volume), the skill folder is not read-only, no cgroup caps',
  );
  if (!capabilities.prlimit) logger.warn('prlimit is not installed: skill scripts run without CPU, memory, process or file-size limits');
}

/**
 * Reloads when anything under the skills folder or skills.yaml changes, once nothing changed for
 * `debounceMs`. Each replica watches its own view (on network volumes events may not arrive: use
 * the reload subject there). Returns a function that stops watching.
 */
function watchSkills(root: string, configPath: string, debounceMs: number, reload: (reason: string) => Promise<unknown>, logger: Logger): () => void {
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  const trigger = (what: string) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      reload(`watch: ${what}`).catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'watch reload failed'));
    }, debounceMs);
    timer.unref();
  };
  const add = (target: string, recursive: boolean, filter?: (file: string) => boolean) => {
    try {
      const w = watch(target, { recursive, persistent: false }, (_event, file) => {
        const name = file?.toString() ?? '';
        if (!filter || filter(name)) trigger(path.join(target, name));
      });
      w.on('error', (err) => logger.warn({ err: errorMessage(err), target }, 'watch stopped'));
      watchers.push(w);
    } catch (err) {
      logger.warn({ err: errorMessage(err), target }, 'cannot watch');
    }
  };
  add(root, true);
  // Editors replace files (rename), so watch the folder and filter on the name.
  add(path.dirname(configPath), false, (f) => f === path.basename(configPath));
  logger.info({ skills_root: root, config: configPath, debounce_ms: debounceMs }, 'watching skills and skills.yaml');
  return () => {
    if (timer) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
