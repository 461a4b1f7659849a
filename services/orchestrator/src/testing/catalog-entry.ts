import type { SkillCatalogEntry } from '@agentloop/skills';

/** A skill catalog entry for tests: listed in the catalog, not core, no tool restriction; `over` replaces any field. */
export const catalogEntry = (id: string, over: Partial<SkillCatalogEntry> = {}): SkillCatalogEntry => ({
  id,
  name: id,
  description: `${id} skill`,
  version: '',
  in_catalog: true,
  core: false,
  allowed_tools: null,
  license: '',
  compatibility: '',
  warnings: [],
  ...over,
});
