export { SkillsConfig, SkillsFile, SkillEntry, TenantSkills, EnvironmentEntry, DEFAULT_SKILLS_CONFIG_PATH, type SkillRefusal } from './config.js';
export {
  SkillRegistry,
  scanSkills,
  isScriptName,
  SKILL_ID_PATTERN,
  SCRIPT_NAME_PATTERN,
  SKILL_DOC_NAMES,
  MAX_SCRIPT_DEPTH,
  MAX_SKILL_FILES,
  type Skill,
  type SkippedSkill,
  type ScanResult,
} from './registry.js';
export { parseSkillDoc, MAX_DESCRIPTION_CHARS, type SkillDoc } from './skill-doc.js';
export {
  readSpecFields,
  parseAllowedTools,
  RawFrontmatter,
  SPEC_NAME_PATTERN,
  SPEC_NAME_MAX,
  SPEC_DESCRIPTION_MAX,
  SPEC_COMPATIBILITY_MAX,
  type SpecFields,
} from './frontmatter.js';
export { SkillFileIndex, resolveSkillLinks } from './links.js';
export { formatSkillCatalog, type CatalogSkill } from './catalog.js';
export { SkillDocError } from './errors.js';
export { SKILL_CATALOG_SUBJECT, SkillCatalogRequest, SkillCatalogEntry, SkillCatalogResponse } from './catalog-wire.js';
export {
  EnvironmentSettings,
  EnvironmentModels,
  EnvironmentModel,
  ENVIRONMENT_MODEL_SLOTS,
  NO_ENVIRONMENT_SETTINGS,
  type EnvironmentModelSlot,
} from './environment.js';
