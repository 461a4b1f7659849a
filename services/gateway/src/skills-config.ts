// skills.yaml lives with the skills library; the gateway reads it for upload hints.
export { SkillsConfig, DEFAULT_SKILLS_CONFIG_PATH } from '@agentloop/skills';
