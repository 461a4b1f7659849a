import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, errorMessage } from '@agentloop/core';

/** skills.yaml shipped with the project (libs/skills/config). */
export const DEFAULT_SKILLS_CONFIG_PATH = fileURLToPath(new URL('../config/skills.yaml', import.meta.url));

const SkillId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'skill ids are 1-64 characters of a-z 0-9 _ - starting with a letter or digit');

const SkillEntry = z
  .object({
    enabled: z.boolean().default(true),
    available_to_subagent: z.boolean().default(false),
    description: z.string().default(''),
    auto_load_on_file_types: z.array(z.string().min(1)).default([]),
    /** Pinned version: a skill whose SKILL.md declares another version is refused. */
    version: z.union([z.string(), z.number()]).transform(String).optional(),
  })
  .strict();

/** Per-tenant governance: which skills a tenant may use ("*" = all). */
const TenantEntry = z.object({ allow: z.union([z.literal('*'), z.array(SkillId)]).default('*') }).strict();

/** skills.yaml (seed 000 §3.3): global switches, core skills, optional skills. */
const SkillsFile = z
  .object({
    global: z
      .object({ enabled: z.boolean().default(true), auto_load_on_file_upload: z.boolean().default(true) })
      .strict()
      .default({ enabled: true, auto_load_on_file_upload: true }),
    core: z.array(SkillId).nullish().transform((v) => v ?? []),
    optional: z.record(SkillId, SkillEntry.nullish().transform((v) => v ?? SkillEntry.parse({}))).nullish().transform((v) => v ?? {}),
    tenants: z.record(z.string(), TenantEntry).nullish().transform((v) => v ?? {}),
  })
  .strict();
export type SkillsFile = z.infer<typeof SkillsFile>;

/** skills.yaml: catalog switches, upload hints, pins and per-tenant allowlists. */
export class SkillsConfig {
  constructor(readonly file: SkillsFile) {}

  /** Whether the skill system is on. */
  get enabled(): boolean {
    return this.file.global.enabled;
  }

  /** Whether a tenant may use a skill (tenants.<tenant>.allow; absent: every skill). */
  allows(tenant: string, skillId: string): boolean {
    const t = this.file.tenants[tenant];
    if (!t || t.allow === '*') return true;
    return t.allow.includes(skillId);
  }

  /** The skill's entry (`optional.<id>`), if configured. */
  entry(skillId: string): z.infer<typeof SkillEntry> | undefined {
    return this.file.optional[skillId];
  }

  /** Shown in the catalog: core skills, optional ones with enabled true, and unconfigured ones. */
  inCatalog(skillId: string): boolean {
    if (this.file.core.includes(skillId)) return true;
    return this.file.optional[skillId]?.enabled ?? true;
  }

  /**
   * Skills that handle a file extension (`auto_load_on_file_types`, matched on
   * the actual extension without the dot, case-insensitive), in file order.
   * Empty when skills or upload hints are switched off.
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

  /** Reads SKILLS_CONFIG (or the shipped default). A missing or invalid file is a ConfigError. */
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
