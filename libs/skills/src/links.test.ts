import { describe, expect, it } from 'vitest';
import { resolveSkillLinks, SkillFileIndex } from './links.js';

describe('resolveSkillLinks', () => {
  const index = new SkillFileIndex(['SKILL.md', 'reference.md', 'forms.md', 'scripts/fill.py', 'Notes.md', 'notes.MD']);

  it('rewrites a reference that exists only in another case to the real file, in prose, code and links', () => {
    const { text, rewritten } = resolveSkillLinks('See REFERENCE.md, then [forms](FORMS.md) and `python Scripts/Fill.py a.pdf`.', index);
    expect(text).toBe('See reference.md, then [forms](forms.md) and `python scripts/fill.py a.pdf`.');
    expect(rewritten).toEqual([
      ['REFERENCE.md', 'reference.md'],
      ['FORMS.md', 'forms.md'],
      ['Scripts/Fill.py', 'scripts/fill.py'],
    ]);
  });

  it('leaves exact names, unknown files and ambiguous matches alone', () => {
    const input = 'reference.md ./forms.md output.pdf NOTES.md';
    expect(resolveSkillLinks(input, index)).toEqual({ text: input, rewritten: [] });
  });

  it('resolves a single name case-insensitively and refuses an ambiguous one', () => {
    expect(index.resolve('Reference.MD')).toBe('reference.md');
    expect(index.resolve('notes.md')).toBeUndefined();
    expect(index.resolve('missing.md')).toBeUndefined();
  });
});
