import { describe, expect, it } from 'vitest';
import { SkillDocError } from './errors.js';
import { MAX_DESCRIPTION_CHARS, parseSkillDoc } from './skill-doc.js';

describe('parseSkillDoc', () => {
  it('reads name, description and version from the YAML frontmatter and returns the body without it', () => {
    const doc = parseSkillDoc('---\nname: PDF Tools\ndescription: Work with PDFs\nversion: "2.1"\nlicense: MIT\n---\n# PDF Tools\n\nBody text.\n', 'pdf');
    expect(doc).toMatchObject({ name: 'PDF Tools', description: 'Work with PDFs', version: '2.1', license: 'MIT', body: '# PDF Tools\n\nBody text.' });
  });

  it('keeps an unquoted version as written (1.10 stays "1.10")', () => {
    expect(parseSkillDoc('---\nname: A\ndescription: B\nversion: 1.10\n---\nx', 'a').version).toBe('1.10');
  });

  it('falls back to the first "# " heading and the first paragraph without frontmatter (seed 000 §3.2)', () => {
    const doc = parseSkillDoc('# PDF Processing Skill\n\n## Overview\nThis skill provides PDF\nprocessing capabilities.\n\nMore.', 'pdf');
    expect(doc.name).toBe('PDF Processing Skill');
    expect(doc.description).toBe('This skill provides PDF processing capabilities.');
    expect(doc.version).toBe('');
  });

  it('completes a frontmatter without description from the body, and a missing name from the folder', () => {
    const doc = parseSkillDoc('---\nversion: "1"\n---\nFirst paragraph here.\n', 'my-skill');
    expect(doc).toMatchObject({ name: 'my-skill', description: 'First paragraph here.', version: '1' });
  });

  it('rejects a frontmatter that is not YAML or not a mapping (the skill is unusable)', () => {
    expect(() => parseSkillDoc('---\nname: [unclosed\n---\nx', 'a')).toThrow(SkillDocError);
    expect(() => parseSkillDoc('---\nname: [unclosed\n---\nx', 'a')).toThrow(/frontmatter is not valid YAML/);
    expect(() => parseSkillDoc('---\n- a\n- b\n---\nx', 'a')).toThrow(/not a mapping/);
  });

  it('a field of the wrong type is a warning and falls back, not a failure', () => {
    const doc = parseSkillDoc('---\nname: a\ndescription: [x, y]\n---\nFrom the body.', 'a');
    expect(doc.description).toBe('From the body.');
    expect(doc.warnings).toContain('`description` should be a string; it is ignored');
  });

  it('ignores code fences when looking for the description and cuts very long descriptions', () => {
    expect(parseSkillDoc('# T\n```\ncode line\n```\nReal text.', 't').description).toBe('Real text.');
    const long = parseSkillDoc(`---\nname: L\ndescription: ${'x'.repeat(5000)}\n---\n`, 'l').description;
    expect(long.length).toBe(MAX_DESCRIPTION_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });

  it('accepts CRLF line endings and a byte order mark', () => {
    const doc = parseSkillDoc('\uFEFF---\r\nname: W\r\ndescription: Windows file\r\n---\r\nBody\r\n', 'w');
    expect(doc).toMatchObject({ name: 'W', description: 'Windows file', body: 'Body' });
  });
});
