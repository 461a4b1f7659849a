import { errorMessage, type Logger } from '@agentloop/core';
import { SkillRegistry, SkillsConfig, type Skill, type SkippedSkill } from '@agentloop/skills';
import { SkillSandboxError } from './errors.js';

const EMPTY_CONFIG = SkillsConfig.parse('');

export interface ReloadResult {
  /** Skill ids found. */
  skills: string[];
  skipped: SkippedSkill[];
  /** skills.yaml was invalid: the previous configuration stays in force. */
  configError?: string;
}

/**
 * The skills on disk (SKILLS_ROOT) and skills.yaml, and the governance between them: which skills
 * a tenant may use (allowlist, version pin), which are in the catalog, which sub-agents get.
 */
export class SkillCatalog {
  private registry: SkillRegistry;
  private settings: SkillsConfig | undefined;
  private pending: Promise<ReloadResult> = Promise.resolve({ skills: [], skipped: [] });

  constructor(
    private readonly opts: {
      root: string;
      /** skills.yaml; undefined: the shipped one. */
      configPath: string | undefined;
      logger: Logger;
    },
  ) {
    this.registry = SkillRegistry.empty(opts.root);
  }

  /** The configuration in force (an empty one before the first load). */
  get config(): SkillsConfig {
    return this.settings ?? EMPTY_CONFIG;
  }

  /** Every skill found on disk, whatever the governance says. */
  get skills(): readonly Skill[] {
    return this.registry.skills;
  }

  /**
   * Re-reads skills.yaml and re-scans the skills folder. The first load throws a ConfigError on an
   * invalid skills.yaml (the process must not start); later ones keep the previous configuration
   * and report the error. Reloads are serialized.
   */
  reload(reason: string): Promise<ReloadResult> {
    const run = async (): Promise<ReloadResult> => {
      let configError: string | undefined;
      try {
        this.settings = await SkillsConfig.load(this.opts.configPath);
      } catch (err) {
        if (!this.settings) throw err;
        configError = errorMessage(err);
        this.opts.logger.error({ err: configError }, 'skills.yaml is invalid; the previous configuration stays in force');
      }
      this.registry = await SkillRegistry.scan(this.opts.root);
      for (const s of this.registry.skipped) this.opts.logger.warn({ skill: s.id, reason: s.reason }, 'skill skipped');
      for (const s of this.registry.skills) {
        if (s.warnings.length > 0) this.opts.logger.warn({ skill: s.id, warnings: s.warnings }, 'skill does not follow the Agent Skills spec (loaded anyway)');
      }
      this.warnAboutConfig();
      this.opts.logger.info({ reason, skills: this.registry.ids(), skipped: this.registry.skipped.length }, 'skills loaded');
      return { skills: this.registry.ids(), skipped: [...this.registry.skipped], ...(configError ? { configError } : {}) };
    };
    const next = this.pending.then(run, run);
    this.pending = next.catch(() => ({ skills: [], skipped: [] }));
    return next;
  }

  /** Skills the tenant may use (allowlist and pin), whether in the catalog or not. */
  usable(tenant: string): Skill[] {
    return this.registry.skills.filter((s) => this.config.refusal(tenant, s) === undefined);
  }

  /** The catalog: usable skills with `enabled` (or core); for a sub-agent only those available to it. */
  catalog(tenant: string, subagent: boolean): Skill[] {
    return this.usable(tenant).filter((s) => this.config.inCatalog(s.id) && (!subagent || this.config.availableToSubagent(s.id)));
  }

  /** Catalog text of a skill: skills.yaml's description when set, else the SKILL.md one. */
  description(skill: Skill): string {
    return this.config.settings(skill.id).description.trim() || skill.description;
  }

  /**
   * The skill a tenant asks for, by id (or, failing that, by its exact name, case-insensitively).
   * Unknown skills and skills outside the tenant's allowlist get the same answer, listing the
   * catalog, so a tenant learns nothing about skills it may not use.
   */
  resolve(tenant: string, idOrName: string, opts: { subagent?: boolean } = {}): Skill {
    const want = idOrName.trim();
    const skill = this.registry.get(want) ?? this.registry.skills.find((s) => s.name.toLowerCase() === want.toLowerCase());
    const refusal = skill ? this.config.refusal(tenant, skill) : undefined;
    if (!skill || refusal?.kind === 'not-allowed') {
      const available = this.catalog(tenant, opts.subagent ?? false).map((s) => s.id);
      throw new SkillSandboxError('NOT_FOUND', `Skill not found: ${want}. Available skills: ${available.join(', ') || '(none)'}`);
    }
    if (refusal) throw new SkillSandboxError('PERMISSION_DENIED', refusal.message);
    if (opts.subagent && !this.config.availableToSubagent(skill.id)) {
      throw new SkillSandboxError('PERMISSION_DENIED', `Skill ${skill.id} is not available to delegated agents (skills.yaml available_to_subagent)`);
    }
    return skill;
  }

  /** Ids named in skills.yaml that match no skill on disk are likely typos: say so once per load. */
  private warnAboutConfig(): void {
    for (const warning of this.config.warnings(new Set(this.registry.ids()))) this.opts.logger.warn({ warning }, 'skills.yaml warning');
  }
}
