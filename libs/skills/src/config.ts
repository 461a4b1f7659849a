import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, errorMessage } from '@agentloop/core';
import { SKILL_ID_PATTERN } from './registry.js';
import { EnvironmentSettings } from './environment.js';

/**
 * The project's skills.yaml. It lives with the skill sandbox, which owns skills; the gateway reads
 * the same file for upload hints, so both agree on the catalog. Resolved from src/ or dist/.
 */
export const DEFAULT_SKILLS_CONFIG_PATH = fileURLToPath(new URL('../../../services/skill-sandbox/config/skills.yaml', import.meta.url));

const SkillId = z.string().regex(SKILL_ID_PATTERN, 'skill ids are 1-64 characters of a-z 0-9 _ - starting with a letter or digit');

/** `optional.<id>` (seed 000 §3.3) plus a version pin. */
export const SkillEntry = z
  .object({
    /** Shown in the catalog (the `skill` tool's description); false: loads only by @mention or upload. */
    enabled: z.boolean().default(true),
    /** Offered to delegated agents (sub-agents) too. */
    available_to_subagent: z.boolean().default(false),
    /** Catalog text; overrides the SKILL.md description when not empty. */
    description: z.string().default(''),
    /** Upload hints: file extensions (without the dot) this skill handles. */
    auto_load_on_file_types: z.array(z.string().min(1)).default([]),
    /** Pinned version: a skill whose SKILL.md declares another version is refused. Quote it ("1.10"). */
    version: z.union([z.string(), z.number()]).transform(String).optional(),
  })
  .strict();
export type SkillEntry = z.infer<typeof SkillEntry>;

/** `tenants.<tenant>`: which skills a tenant may use ("*" = all, the default). */
export const TenantSkills = z.object({ allow: z.union([z.literal('*'), z.array(SkillId)]).default('*') }).strict();
export type TenantSkills = z.infer<typeof TenantSkills>;

/**
 * `environments.<name>` (seed 002: a named set of skills, models and agents a run selects with
 * `config.configurable.environment`): its skills are the catalog of runs in it; its models, agents,
 * system prompt and tools (environment.ts) are what the orchestrator applies to those runs.
 */
export const EnvironmentEntry = z
  .object({
    /** The skills runs in this environment may use (and see in the catalog). */
    skills: z.array(SkillId).default([]),
    /** Skills preloaded into every run of the environment; default: the global `core` ones it has. */
    core: z.array(SkillId).optional(),
    ...EnvironmentSettings.shape,
  })
  .strict();
export type EnvironmentEntry = z.infer<typeof EnvironmentEntry>;

const GlobalSettings = z.object({ enabled: z.boolean().default(true), auto_load_on_file_upload: z.boolean().default(true) }).strict();

/** skills.yaml (seed 000 §3.3): global switches, core skills, optional skills, tenant allowlists. */
export const SkillsFile = z
  .object({
    global: GlobalSettings.nullish().transform((v) => v ?? GlobalSettings.parse({})),
    core: z
      .array(SkillId)
      .nullish()
      .transform((v) => v ?? []),
    optional: z
      .record(
        SkillId,
        SkillEntry.nullish().transform((v) => v ?? SkillEntry.parse({})),
      )
      .nullish()
      .transform((v) => v ?? {}),
    tenants: z
      .record(
        z.string().min(1),
        TenantSkills.nullish().transform((v) => v ?? TenantSkills.parse({})),
      )
      .nullish()
      .transform((v) => v ?? {}),
    environments: z
      .record(
        SkillId,
        EnvironmentEntry.nullish().transform((v) => v ?? EnvironmentEntry.parse({})),
      )
      .nullish()
      .transform((v) => v ?? {}),
  })
  .strict();
export type SkillsFile = z.infer<typeof SkillsFile>;

/** Why a tenant may not use a skill. */
export type SkillRefusal =
  /** global.enabled is false. */
  | { kind: 'disabled'; message: string }
  /** Outside the tenant's allowlist: callers answer as if the skill did not exist. */
  | { kind: 'not-allowed'; message: string }
  /** The SKILL.md version differs from the pinned one. */
  | { kind: 'version-mismatch'; message: string; pinned: string; actual: string };

const ENTRY_DEFAULTS: SkillEntry = SkillEntry.parse({});

/** skills.yaml: catalog switches, upload hints, version pins and per-tenant allowlists. */
export class SkillsConfig {
  constructor(readonly file: SkillsFile) {}

  /** Whether the skill system is on (global.enabled). */
  get enabled(): boolean {
    return this.file.global.enabled;
  }

  /** global.auto_load_on_file_upload. */
  get autoLoadOnFileUpload(): boolean {
    return this.file.global.auto_load_on_file_upload;
  }

  /** Skills loaded at startup / always in the catalog (`core`). */
  get core(): readonly string[] {
    return this.file.core;
  }

  /** Names of the configured environments, sorted. */
  environmentNames(): string[] {
    return Object.keys(this.file.environments).sort();
  }

  /** An environment's entry, or undefined when it is not configured. */
  environment(name: string): EnvironmentEntry | undefined {
    return this.file.environments[name];
  }

  /** What the orchestrator applies to a run in the environment besides its skills. */
  settingsOf(environment: EnvironmentEntry): EnvironmentSettings {
    const { models, agents, system_prompt, tools } = environment;
    return { models, agents, system_prompt, tools };
  }

  /**
   * What is odd but not fatal about the file, given the installed skill ids: skills named but not
   * installed (they may be dropped in before the next reload) and an environment's core skills
   * outside its own skills (never loaded: the environment's catalog does not have them).
   */
  warnings(installed: ReadonlySet<string>): string[] {
    const out: string[] = [];
    const f = this.file;
    const named = new Set([
      ...f.core,
      ...Object.keys(f.optional),
      ...Object.values(f.tenants).flatMap((t) => (t.allow === '*' ? [] : t.allow)),
      ...Object.values(f.environments).flatMap((e) => e.skills),
    ]);
    const missing = [...named].filter((id) => !installed.has(id));
    if (missing.length > 0) out.push(`skills.yaml names skills that are not installed: ${missing.join(', ')}`);
    for (const [name, env] of Object.entries(f.environments)) {
      const outside = (env.core ?? []).filter((id) => !env.skills.includes(id));
      if (outside.length > 0) out.push(`environments.${name}.core: ${outside.join(', ')} not in the environment's skills (never preloaded)`);
    }
    return out;
  }

  /** Core skills of a run: the environment's `core` (default: the global ones it has), or the global list. */
  coreFor(environment: EnvironmentEntry | undefined): readonly string[] {
    if (!environment) return this.file.core;
    return environment.core ?? this.file.core.filter((id) => environment.skills.includes(id));
  }

  /** Whether a tenant may use a skill (tenants.<tenant>.allow; a tenant not listed: every skill). */
  allows(tenant: string, skillId: string): boolean {
    const t = this.file.tenants[tenant];
    if (!t || t.allow === '*') return true;
    return t.allow.includes(skillId);
  }

  /** The skill's configured entry (`optional.<id>`), if any. */
  entry(skillId: string): SkillEntry | undefined {
    return this.file.optional[skillId];
  }

  /** The entry with defaults for a skill that is not configured. */
  settings(skillId: string): SkillEntry {
    return this.file.optional[skillId] ?? ENTRY_DEFAULTS;
  }

  /** The pinned version, if any. */
  pinnedVersion(skillId: string): string | undefined {
    return this.file.optional[skillId]?.version;
  }

  /** Shown in the catalog: core skills, optional ones with enabled true, and unconfigured ones. */
  inCatalog(skillId: string): boolean {
    if (this.file.core.includes(skillId)) return true;
    return this.settings(skillId).enabled;
  }

  /** Offered to delegated agents (`available_to_subagent`; default false, seed 000 §3.3). */
  availableToSubagent(skillId: string): boolean {
    return this.settings(skillId).available_to_subagent;
  }

  /**
   * Governance: may `tenant` use this skill? Undefined when yes, else the refusal. Checked in order:
   * the skill system is on, the tenant's allowlist, the pinned version.
   */
  refusal(tenant: string, skill: { id: string; version: string }): SkillRefusal | undefined {
    if (!this.enabled) return { kind: 'disabled', message: 'Skills are switched off (skills.yaml global.enabled is false)' };
    if (!this.allows(tenant, skill.id)) return { kind: 'not-allowed', message: `Skill ${skill.id} is not allowed for tenant ${tenant}` };
    const pinned = this.pinnedVersion(skill.id);
    if (pinned !== undefined && pinned !== skill.version) {
      return {
        kind: 'version-mismatch',
        pinned,
        actual: skill.version,
        message: `Skill ${skill.id} is version ${skill.version || '(none)'} but version ${pinned} is pinned in skills.yaml; it is not available until they match`,
      };
    }
    return undefined;
  }

  /**
   * Skills that handle a file extension (`auto_load_on_file_types`, matched on the actual extension
   * without the dot, case-insensitive), in file order. Empty when skills or upload hints are off.
   * A skill hidden from the catalog still gets hints: uploads are one way it loads (seed 000 §3.4).
   */
  skillsForExtension(ext: string): string[] {
    const { global } = this.file;
    if (!global.enabled || !global.auto_load_on_file_upload) return [];
    const want = ext.replace(/^\./, '').toLowerCase();
    if (want === '') return [];
    return Object.entries(this.file.optional)
      .filter(([, s]) => s.auto_load_on_file_types.some((t) => t.replace(/^\./, '').toLowerCase() === want))
      .map(([id]) => id);
  }

  /**
   * Parses skills.yaml text. Throws a ConfigError naming the source and each offending path, e.g.
   * "skills.yaml is invalid: optional.pdf.enabled: Invalid input: expected boolean".
   */
  static parse(text: string, source = 'skills.yaml'): SkillsConfig {
    let raw: unknown;
    try {
      raw = parseYaml(text) ?? {};
    } catch (err) {
      throw new ConfigError(`${source} is not valid YAML: ${errorMessage(err)}`);
    }
    const parsed = SkillsFile.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new ConfigError(`${source} is invalid: ${issues}`);
    }
    return new SkillsConfig(parsed.data);
  }

  /** Reads a skills.yaml (undefined: DEFAULT_SKILLS_CONFIG_PATH). A missing or invalid file is a ConfigError. */
  static async load(path: string | undefined): Promise<SkillsConfig> {
    const file = path ?? DEFAULT_SKILLS_CONFIG_PATH;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`SKILLS_CONFIG: cannot read ${file}: ${errorMessage(err)}`);
    }
    return SkillsConfig.parse(text, file);
  }
}
