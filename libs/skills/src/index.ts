export { SkillsConfig, SkillsFile, SkillEntry, TenantSkills, DEFAULT_SKILLS_CONFIG_PATH, type SkillRefusal } from './config.js';
export {
  SkillRegistry,
  scanSkills,
  isScriptName,
  SKILL_ID_PATTERN,
  SCRIPT_NAME_PATTERN,
  SKILL_DOC_NAMES,
  type Skill,
  type SkippedSkill,
  type ScanResult,
} from './registry.js';
export { parseSkillDoc, SkillFrontmatter, MAX_DESCRIPTION_CHARS, type SkillDoc } from './skill-doc.js';
export { formatSkillCatalog, type CatalogSkill } from './catalog.js';
export { SkillDocError } from './errors.js';
