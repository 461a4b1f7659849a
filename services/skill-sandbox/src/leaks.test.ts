/**
 * No host path crosses the wire: script output, tracebacks, spawn and dependency errors and every
 * error message show workspace-relative paths, `skills/<id>/…` and named roots instead. Answers do
 * not depend on whether a host file outside exists. Concurrent loads never trip over the skill link.
 */
import { realpathSync } from 'node:fs';
import { lstat, readlink, realpath, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteToolResponse } from '@agentloop/proto';
import { startSandboxHarness, type SandboxHarness } from './testing/index.js';

const LEAKY: Record<string, string> = {
  'leaky/SKILL.md': '---\nname: Leaky\ndescription: scripts that print host paths\n---\n# Leaky\n',
  'leaky/scripts/raise.py': 'def main():\n    raise ValueError("boom")\n\nmain()\n',
  'leaky/scripts/read_missing.py':
    'import json, os, sys\nargs = json.load(sys.stdin)\nopen(os.path.join(os.environ["AGENT_WORKSPACE_PATH"], args["file"])).read()\n',
  'leaky/scripts/open_abs.py': 'import json, sys\nargs = json.load(sys.stdin)\nprint(open(args["path"]).read()[:10])\n',
  'leaky/scripts/where.py': [
    'import json, os, sys',
    'ws = os.environ["AGENT_WORKSPACE_PATH"]',
    'print(json.dumps({"cwd": os.getcwd(), "ws": ws, "parent": os.path.dirname(ws), "root": os.path.dirname(os.path.dirname(ws)),',
    '  "home": os.environ["HOME"], "file": __file__, "path": os.pathsep.join(sys.path[:1])}))',
  ].join('\n'),
  'leaky/scripts/raise.mjs': "throw new Error('boom at ' + process.env.AGENT_WORKSPACE_PATH + '/outputs/x');\n",
  'vanish/SKILL.md': '---\nname: Vanish\ndescription: its document disappears after the scan\n---\n# Vanish\n',
  'needs/SKILL.md': '---\nname: Needs\ndescription: requirements that point at a missing file\n---\n# Needs\n',
  'needs/requirements.txt': '--no-index\n-r other-requirements.txt\n',
};

let h: SandboxHarness;
/** Every host folder the answers must not show. */
let hostPaths: string[];

beforeAll(async () => {
  h = await startSandboxHarness({ files: LEAKY });
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  hostPaths = [
    ...new Set([h.skillsRoot, h.workspaceRoot, h.cacheRoot, path.dirname(h.skillsRoot), tmpdir(), process.cwd(), homedir()].flatMap((p) => [p, real(p)])),
  ];
});
afterAll(async () => h?.[Symbol.asyncDispose]());

/** The answer's content and error message, asserted free of every host folder. */
function noHostPath(res: ExecuteToolResponse | { warning: string; error?: { message: string } }): string {
  const texts = 'content' in res ? [res.content, res.error?.message ?? ''] : [res.warning, res.error?.message ?? ''];
  for (const text of texts) for (const p of hostPaths) expect(text, `leaks ${p}`).not.toContain(p);
  return texts[0]!;
}

const run = (script_name: string, args: unknown = {}, skill_id = 'leaky', threadId = 'th-leak') =>
  h.execute('run_skill_script', { skill_id, script_name, args }, { threadId });

describe('skill script output and errors', () => {
  it('a Python traceback names the script as skills/<id>/scripts/<name>', async () => {
    const text = noHostPath(await run('raise.py'));
    expect(text).toMatch(/^Error: Script scripts\/raise\.py of skill [a-z-]+ failed \(exit 1\)\n\[stderr\]\nTraceback/);
    expect(text).toContain('File "skills/leaky/scripts/raise.py", line 4, in <module>');
    expect(text).toContain('ValueError: boom');
  });

  it('a script that reads a missing workspace file shows the workspace-relative path', async () => {
    const text = noHostPath(await run('read_missing.py', { file: 'uploads/missing.csv' }));
    expect(text).toContain("No such file or directory: 'uploads/missing.csv'");
  });

  it('paths a script prints are mapped to logical names: the workspace ".", skills/<id>, named roots', async () => {
    const out = JSON.parse(noHostPath(await run('where.py'))) as Record<string, string>;
    expect(out).toMatchObject({ cwd: '.', ws: '.', file: 'skills/leaky/scripts/where.py', path: 'skills/leaky/scripts' });
    if (h.sandbox.isolation.mode === 'bubblewrap') {
      // The workspace is /workspace inside: nothing of the host's folders above it exists there.
      // HOME is the sandbox's private /tmp (shown as <tmp>, like the host's).
      expect(out).toMatchObject({ parent: '/', root: '/', home: '<tmp>' });
    } else {
      expect(out).toMatchObject({ parent: '<workspace-root>/acme', root: '<workspace-root>' });
      expect(out.home).toMatch(/^<tmp>\/agentloop-skill-/);
    }
  });

  it('a Node error names the script by its file:// URL, redacted to skills/<id>/…', async () => {
    const text = noHostPath(await run('raise.mjs'));
    expect(text).toContain('skills/leaky/scripts/raise.mjs');
    expect(text).toContain('Error: boom at outputs/x');
  });

  it('an error of the sandbox itself (a skill document gone after the scan) names no host path', async () => {
    await rm(path.join(h.skillsRoot, 'vanish', 'SKILL.md'));
    const res = await h.execute('skill', { skill: 'vanish' }, { threadId: 'th-leak' });
    const text = noHostPath(res);
    expect(text).toMatch(/^Error: /);
    expect(text).toContain('skills/vanish/SKILL.md');
  });

  it('a dependency warning (a requirements file that cannot be opened) names no host path', async () => {
    const loaded = await h.loadSkill('acme', 'th-leak', 'needs');
    expect(loaded.error).toBeUndefined();
    expect(loaded.dependenciesInstalled).toBe(false);
    noHostPath(loaded);
    expect(loaded.warning).toContain('skills/needs/other-requirements.txt');
    noHostPath(await h.execute('skill', { skill: 'needs' }, { threadId: 'th-leak' }));
  });
});

describe('answers do not depend on host files outside', () => {
  it('a script name that escapes answers the same whether or not the host file exists', async () => {
    // The name is echoed (redacted when it holds a host path): compare what surrounds it.
    const answer = async (name: string) =>
      (await run(name, {}, 'csv-stats')).content.replace(/^Error: Script not found: .* is not a script/, 'Error: Script not found: <name> is not a script');
    const pairs: Array<[string, string]> = [
      ['../../../../../../../../etc/passwd', '../../../../../../../../etc/agentloop-missing-file'],
      ['/etc/passwd', '/etc/agentloop-missing-file'],
      [`${h.skillsRoot}/leaky/scripts/raise.py`, `${h.skillsRoot}/leaky/scripts/missing.py`],
      ['../../leaky/scripts/raise.py', '../../leaky/scripts/missing.py'],
      ['passwd', 'agentloop-missing.py'],
    ];
    for (const [existing, missing] of pairs) {
      const a = await answer(existing);
      expect(a).toBe(await answer(missing));
      expect(a).toMatch(/^Error: /);
      for (const p of hostPaths) expect(a).not.toContain(p);
    }
    expect(await answer('stats.pyc')).toBe(await answer('raise.py'));
  });

  it('a skill id that escapes answers the same whether or not the folder exists', async () => {
    const answer = async (id: string) =>
      (await run('x.py', {}, id)).content.replace(/^Error: Skill not found: .*?\. Available/, 'Error: Skill not found: <id>. Available');
    expect(await answer('../../etc')).toBe(await answer('../../agentloop-missing-dir'));
    expect(await answer('/tmp')).toBe(await answer('/agentloop-missing-dir'));
    const skill = async (id: string) =>
      (await h.execute('skill', { skill: id }, { threadId: 'th-leak' })).content.replace(
        /^Error: Skill not found: .*?\. Available/,
        'Error: Skill not found: <id>. Available',
      );
    expect(await skill('../leaky')).toBe(await skill('../missing'));
  });

  // stats.mjs still tells the two apart ("not found" vs "is outside"): it resolves the path before
  // checking containment, and Node 20's permission model does not guard realpath (see the README).
  it('a script given an outside path answers the same whether or not the host file exists (shipped csv-stats stats.py)', async () => {
    for (const script of ['stats.py']) {
      const answer = async (file: string) => noHostPath(await run(script, { file }, 'csv-stats')).replaceAll(file, '<file>');
      expect(await answer('../../../../../../../../etc/passwd')).toBe(await answer('../../../../../../../../etc/agentloop-missing-file'));
      expect(await answer('/etc/passwd')).toBe(await answer('/etc/agentloop-missing-file'));
    }
  });
});

describe('skill links under concurrency', () => {
  it('loads of skills in one workspace at once all succeed, and each link points at its skill', async () => {
    const thread = 'th-race';
    const calls: Array<Promise<{ text: string }>> = [];
    for (let i = 0; i < 8; i++) {
      calls.push(h.loadSkill('acme', thread, 'csv-stats').then((r) => ({ text: r.error?.message ?? 'ok' })));
      calls.push(h.execute('skill', { skill: 'csv-stats' }, { threadId: thread }).then((r) => ({ text: r.error?.message ?? 'ok' })));
      calls.push(h.execute('skill', { skill: i % 2 ? 'docx' : 'pdf' }, { threadId: thread }).then((r) => ({ text: r.error?.message ?? 'ok' })));
      calls.push(run('where.py', {}, 'leaky', thread).then((r) => ({ text: r.error?.message ?? 'ok' })));
    }
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.text !== 'ok')).toEqual([]);
    for (const id of ['csv-stats', 'pdf', 'docx', 'leaky']) {
      const link = path.join(h.workspace('acme', thread), 'skills', id);
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
      expect(await readlink(link)).toBe(await realpath(path.join(h.skillsRoot, id)));
    }
  });

  it('a fresh workspace whose skills/ folder is missing is linked by concurrent loads without EEXIST', async () => {
    for (let round = 0; round < 5; round++) {
      const thread = `th-race-${round}`;
      // The first load creates the workspace; remove skills/ so concurrent loads create it together.
      await h.loadSkill('acme', thread, 'pdf');
      await rm(path.join(h.workspace('acme', thread), 'skills'), { recursive: true });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => h.loadSkill('acme', thread, ['pdf', 'docx', 'xlsx'][i % 3]!)));
      expect(results.map((r) => r.error?.message ?? 'ok')).toEqual(Array(6).fill('ok'));
    }
  });
});
