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

  const toolboxDir = path.join(ROOT, 'deploy', 'skills-toolbox');
  const installScript = readFileSync(path.join(toolboxDir, 'install.sh'), 'utf8');
  /** The script's APT_PACKAGES=( … ) list. */
  const toolboxAptPackages = (/APT_PACKAGES=\(([^)]*)\)/.exec(installScript)?.[1] ?? '').split(/\s+/).filter(Boolean);

  it('gives skills the documented toolbox: Python with document packages, Node packages, poppler, qpdf, pandoc, LibreOffice headless', () => {
    expect(aptPackages).toEqual(expect.arrayContaining(['util-linux', 'bubblewrap']));
    expect(toolboxAptPackages).toEqual(expect.arrayContaining(['python3', 'python3-venv', 'poppler-utils', 'qpdf', 'pandoc']));
    // LibreOffice headless, from bookworm-backports on Debian 12 (its own 7.4 cannot run the skills' recalculation macros).
    expect(installScript).toMatch(/apt-get install [^\n]*"\$\{lo_release\[@\]\}" libreoffice-nogui/);
    expect(installScript).toContain('lo_release=(-t bookworm-backports)');
    const copy = finalStage.find((i) => i.getKeyword() === 'COPY' && args(i).includes('deploy/skills-toolbox'));
    expect(copy, 'the toolbox folder is copied into the image').toBeDefined();
    // The image installs it with the script a developer runs on their own machine, apt included.
    expect(finalStage.some((i) => i.getKeyword() === 'RUN' && /install\.sh --apt \/opt\/skills-toolbox\b/.test(args(i).replace(/\\\n\s*/g, ' ')))).toBe(true);
    const env = finalStage.filter((i) => i.getKeyword() === 'ENV').map(args);
    expect(env).toContain('SKILLS_TOOLBOX=/opt/skills-toolbox');
    const toolbox = readFileSync(path.join(toolboxDir, 'requirements.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.split(/[<>=[]/)[0]!.trim());
    expect(toolbox).toEqual(expect.arrayContaining(['pypdf', 'pdfplumber', 'openpyxl', 'python-docx', 'python-pptx', 'reportlab', 'pandas']));
    const node = JSON.parse(readFileSync(path.join(toolboxDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(node.dependencies)).toEqual(expect.arrayContaining(['docx', 'pptxgenjs']));
    // Pinned: an image build must not pick up a new major version silently.
    for (const v of Object.values(node.dependencies)) expect(v).toMatch(/^\d+\.\d+\.\d+$/);
  });

  const bookworm =
    existsSync('/etc/os-release') && readFileSync('/etc/os-release', 'utf8').includes('VERSION_CODENAME=bookworm') && existsSync('/usr/bin/apt-cache');
  it.skipIf(!bookworm)('installs only packages Debian bookworm has', () => {
    const wanted = [...aptPackages, ...toolboxAptPackages, 'libreoffice-nogui'];
    const out = execFileSync('apt-cache', ['show', '--no-all-versions', ...wanted], { encoding: 'utf8' });
    const found = new Set([...out.matchAll(/^Package: (\S+)$/gm)].map((m) => m[1]));
    expect(wanted.filter((p) => !found.has(p))).toEqual([]);
  });
});
