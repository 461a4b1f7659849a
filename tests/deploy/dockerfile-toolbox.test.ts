/**
 * deploy/Dockerfile without a Docker engine: parsed with dockerfile-ast and linted with
 * dockerfile-utils (the validator of VS Code's Docker support, which reports what `docker build`
 * rejects), and checked for the skills toolbox that docs/skills-ecosystem.md documents. Where
 * apt-cache answers for Debian bookworm (the image's base), every apt package must exist there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const text = readFileSync(path.join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
/** The instructions of the last stage (the image that runs). */
const finalStage = (() => {
  const all = dockerfile.getInstructions();
  const lastFrom = all.map((i) => i.getKeyword()).lastIndexOf('FROM');
  return all.slice(lastFrom);
})();
const args = (i: (typeof finalStage)[number]) => i.getArgumentsContent() ?? '';
/** Packages named by `apt-get install` in the final stage. */
const aptPackages = finalStage
  .filter((i) => i.getKeyword() === 'RUN' && args(i).includes('apt-get install'))
  .flatMap((i) => args(i).replace(/\\\n/g, ' ').split('&&'))
  .filter((cmd) => cmd.includes('apt-get install'))
  .flatMap((cmd) => cmd.split(/\s+/).filter((w) => w && !w.startsWith('-') && !['apt-get', 'install'].includes(w)));

describe('deploy/Dockerfile', () => {
  it('has no error a docker build would report', () => {
    const errors = validate(text).filter((d) => d.severity === 1);
    expect(errors.map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('gives skills the documented toolbox: Python with document packages, poppler, qpdf, pandoc, LibreOffice headless', () => {
    expect(aptPackages).toEqual(expect.arrayContaining(['python3', 'python3-venv', 'util-linux', 'poppler-utils', 'qpdf', 'pandoc', 'libreoffice-nogui']));
    const copy = finalStage.find((i) => i.getKeyword() === 'COPY' && args(i).includes('skills-toolbox.txt'));
    expect(copy, 'the toolbox requirements are copied into the image').toBeDefined();
    expect(existsSync(path.join(ROOT, 'deploy', 'skills-toolbox.txt'))).toBe(true);
    expect(
      finalStage.some(
        (i) => i.getKeyword() === 'RUN' && /\/opt\/skills-python\/bin\/pip install .*-r \/opt\/skills-toolbox\.txt/.test(args(i).replace(/\\\n\s*/g, ' ')),
      ),
    ).toBe(true);
    const env = finalStage.filter((i) => i.getKeyword() === 'ENV').map(args);
    expect(env).toContain('SKILL_PYTHON=/opt/skills-python/bin/python3');
    const toolbox = readFileSync(path.join(ROOT, 'deploy', 'skills-toolbox.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.split(/[<>=[]/)[0]!.trim());
    expect(toolbox).toEqual(expect.arrayContaining(['pypdf', 'pdfplumber', 'openpyxl', 'python-docx', 'python-pptx', 'reportlab', 'pandas']));
  });

  const bookworm =
    existsSync('/etc/os-release') && readFileSync('/etc/os-release', 'utf8').includes('VERSION_CODENAME=bookworm') && existsSync('/usr/bin/apt-cache');
  it.skipIf(!bookworm)('installs only packages Debian bookworm has', () => {
    const out = execFileSync('apt-cache', ['show', '--no-all-versions', ...aptPackages], { encoding: 'utf8' });
    const found = new Set([...out.matchAll(/^Package: (\S+)$/gm)].map((m) => m[1]));
    expect(aptPackages.filter((p) => !found.has(p))).toEqual([]);
  });
});
