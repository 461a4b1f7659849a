/** What a catalog line needs to know about a skill. */
export interface CatalogSkill {
  id: string;
  name: string;
  description: string;
  scripts?: readonly string[];
}

/**
 * The skills list of the `skill` tool's description (seed 002 §5.2): one `- name: description` line
 * per skill, followed by the id to pass (when it differs from the name) and the scripts it has.
 */
export function formatSkillCatalog(skills: readonly CatalogSkill[]): string {
  return skills
    .map((s) => {
      const extra = [s.name !== s.id ? `id: ${s.id}` : '', s.scripts?.length ? `scripts: ${s.scripts.join(', ')}` : ''].filter(Boolean).join('; ');
      return `- ${oneLine(s.name)}: ${oneLine(s.description)}${extra ? ` (${extra})` : ''}`;
    })
    .join('\n');
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
