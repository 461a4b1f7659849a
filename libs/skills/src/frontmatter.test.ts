import { describe, expect, it } from 'vitest';
import { parseAllowedTools, readSpecFields } from './frontmatter.js';
import { parseSkillDoc } from './skill-doc.js';

describe('Agent Skills spec frontmatter', () => {
  it('reads a spec-conformant frontmatter without warnings, the version from metadata.version', () => {
    const doc = parseSkillDoc(
      [
        '---',
        'name: pdf-forms',
        'description: Fill PDF forms.',
        'license: Apache-2.0',
        'compatibility: Requires python3 and pypdf',
        'allowed-tools: read_file run_skill_script',
        'metadata:',
        '  author: example-org',
        '  version: "1.10"',
        '---',
        '# Body',
      ].join('\n'),
      'pdf-forms',
    );
    expect(doc).toMatchObject({
      name: 'pdf-forms',
      description: 'Fill PDF forms.',
      license: 'Apache-2.0',
      compatibility: 'Requires python3 and pypdf',
      allowedTools: ['read_file', 'run_skill_script'],
      metadata: { author: 'example-org', version: '1.10' },
      version: '1.10',
      warnings: [],
    });
  });

  it('keeps reading a top-level version, with a deprecation warning', () => {
    const f = readSpecFields({ name: 'a', description: 'd', version: '2.0' }, 'a');
    expect(f.version).toBe('2.0');
    expect(f.warnings).toEqual(['top-level `version` is deprecated; declare it as `metadata.version`']);
    const both = readSpecFields({ name: 'a', description: 'd', version: '1', metadata: { version: '3' } }, 'a');
    expect(both.version).toBe('3');
    expect(both.warnings).toEqual(['top-level `version` is ignored: `metadata.version` is set']);
  });

  it('warns about each name rule, a long description, unknown keys and a bad metadata map, and still reads the rest', () => {
    const f = readSpecFields(
      { name: 'PDF Tools', description: 'x'.repeat(1100), extra: 'y', metadata: { ok: 'v', nested: { a: 'b' } }, compatibility: 'c'.repeat(501) },
      'pdf',
    );
    expect(f.name).toBe('PDF Tools');
    expect(f.metadata).toEqual({ ok: 'v' });
    expect(f.warnings).toEqual([
      '`name` "PDF Tools" does not follow the spec (1-64 lowercase letters, digits and single hyphens)',
      '`name` "PDF Tools" differs from the folder name "pdf" (the spec requires them to match)',
      '`description` is longer than 1024 characters; it is cut',
      '`compatibility` is longer than 500 characters',
      '`metadata.nested` should be a string; it is ignored',
      'unknown frontmatter keys ignored: extra (put extra data under `metadata`)',
    ]);
    for (const bad of ['-pdf', 'pdf-', 'pd--f', 'x'.repeat(65)]) {
      expect(readSpecFields({ name: bad, description: 'd' }, bad).warnings[0]).toMatch(/does not follow the spec/);
    }
    expect(readSpecFields({}, 'a').warnings).toEqual([
      '`name` is missing (the spec requires it); the folder name is used',
      '`description` is missing (the spec requires it)',
    ]);
  });

  it('parses allowed-tools space-delimited, comma-separated (seed 004), as a list, and with tool patterns', () => {
    expect(parseAllowedTools('Read Write  Bash(git status:*)')).toEqual(['Read', 'Write', 'Bash']);
    expect(parseAllowedTools('Read, Write, Bash')).toEqual(['Read', 'Write', 'Bash']);
    const listed = readSpecFields({ name: 'a', description: 'd', 'allowed-tools': ['read_file', 'write_file'] }, 'a');
    expect(listed.allowedTools).toEqual(['read_file', 'write_file']);
    expect(listed.warnings).toEqual(['`allowed-tools` should be a space-delimited string; a list is accepted']);
    expect(readSpecFields({ name: 'a', description: 'd' }, 'a').allowedTools).toBeNull();
  });

  it('a document without frontmatter loads with a warning', () => {
    expect(parseSkillDoc('# T\n\nText.', 't').warnings).toEqual(['no YAML frontmatter (the spec requires `name` and `description` in one)']);
  });
});
