export { SkillsConfig, DEFAULT_SKILLS_CONFIG_PATH, type SkillsFile } from './config.js';
export { scanSkills, parseSkillDoc, SKILL_ID_PATTERN, type Skill, type SkippedSkill } from './registry.js';
