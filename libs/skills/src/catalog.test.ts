import { describe, expect, it } from 'vitest';
import { formatSkillCatalog } from './catalog.js';

describe('formatSkillCatalog', () => {
  it('lists "- name: description" per skill, with the id when it differs and the scripts', () => {
    expect(
      formatSkillCatalog([
        { id: 'pdf', name: 'pdf', description: 'PDF files' },
        { id: 'csv-stats', name: 'CSV statistics', description: 'Stats\nof CSV', scripts: ['stats.py', 'stats.mjs'] },
      ]),
    ).toBe('- pdf: PDF files\n- CSV statistics: Stats of CSV (id: csv-stats; scripts: stats.py, stats.mjs)');
  });
});
