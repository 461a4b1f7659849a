import { describe, expect, it } from 'vitest';
import { skillsCatalogSection } from './skill-policy.js';
import { catalogEntry } from './testing/catalog-entry.js';

const entry = catalogEntry;

describe('skillsCatalogSection', () => {
  const catalog = [entry('pdf', { name: 'PDF  tools', description: ' Reads\n  and writes PDFs ' }), entry('hidden', { in_catalog: false }), entry('xlsx')];

  it('lists the catalog entries, one line each with whitespace collapsed, under the head of the language', () => {
    expect(skillsCatalogSection(catalog, 'en')).toBe(
      [
        '# Available skills',
        'Skills are knowledge packages (instructions and scripts), not tools. When one fits the task, load it with the `skill` tool, then follow its `skills/<id>/SKILL.md` (run its scripts with run_skill_script).',
        '',
        '- pdf (PDF tools): Reads and writes PDFs — skills/pdf/SKILL.md',
        '- xlsx: xlsx skill — skills/xlsx/SKILL.md',
      ].join('\n'),
    );
    expect(skillsCatalogSection(catalog, 'zh').split('\n').slice(0, 1)).toEqual(['# 可用技能（Skills）']);
    expect(
      skillsCatalogSection(catalog, 'zh').endsWith(
        '\n\n- pdf (PDF tools): Reads and writes PDFs — skills/pdf/SKILL.md\n- xlsx: xlsx skill — skills/xlsx/SKILL.md',
      ),
    ).toBe(true);
  });

  it('is empty without a listed skill, and the same text every call', () => {
    expect(skillsCatalogSection([entry('hidden', { in_catalog: false })], 'en')).toBe('');
    expect(skillsCatalogSection([], 'en')).toBe('');
    expect(skillsCatalogSection(catalog, 'en')).toBe(skillsCatalogSection(catalog, 'en'));
    // Another catalog (a refreshed cache) with other text gives its own lines.
    expect(skillsCatalogSection([entry('pdf', { description: 'New' })], 'en')).toContain('- pdf: New — skills/pdf/SKILL.md');
  });
});
