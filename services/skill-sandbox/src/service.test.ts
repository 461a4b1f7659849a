import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { lstat, mkdir, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Headers } from '@agentloop/bus';
import { startSandboxHarness, type SandboxHarness } from './testing/index.js';

const SKILLS_YAML = `
optional:
  pdf: { enabled: false }
  csv-stats: { available_to_subagent: true, auto_load_on_file_types: ["csv"] }
  pinned: { version: "2" }
tenants:
  globex: { allow: [csv-stats] }
  nobody: { allow: [] }
`;

/** Test skills beside the project's: scripts that sleep, dump their env, fail, print a lot, ... */
const TEST_SKILLS: Record<string, string> = {
  'testing/SKILL.md': '---\nname: Testing\ndescription: scripts for tests\n---\n# Testing\n\nThe body.',
  // Starts a grandchild (`sleep 300.4242`, a command line no other process has), says so, and
  // sleeps: the timeout must kill both.
  'testing/scripts/sleep.py':
    'import subprocess, time\nsubprocess.Popen(["sleep", "300.4242"])\nopen("outputs/child.started", "w").write("yes")\ntime.sleep(300)\n',
  // Whether a script reaches a local port, and reads the environment block of a given process.
  'testing/scripts/probe.py': [
    'import json, os, socket, sys',
    'args = json.load(sys.stdin)',
    'try:',
    '    socket.create_connection(("127.0.0.1", args["port"]), timeout=2).close()',
    '    net = True',
    'except OSError:',
    '    net = False',
    'try:',
    '    environ = len(open(f"/proc/{args[\'pid\']}/environ", "rb").read()) > 0',
    'except OSError:',
    '    environ = False',
    'print(json.dumps({"net": net, "serviceEnviron": environ}))',
  ].join('\n'),
  'testing/scripts/env.py': 'import json, os\nprint(json.dumps(dict(os.environ)))\n',
  'testing/scripts/env.mjs': 'console.log(JSON.stringify(process.env));\n',
  'testing/scripts/missing.py': 'import nonexistent_module_xyz\n',
  'testing/scripts/loud.py': 'print("x" * 5000)\n',
  'testing/scripts/fail.py': 'import sys\nprint("something went wrong", file=sys.stderr)\nsys.exit(3)\n',
  'testing/scripts/echo.py': 'import json, os, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({"args": args, "cwd": os.getcwd()}))\n',
  'testing/scripts/read-outside.mjs': "import { readFileSync } from 'node:fs';\nconsole.log(readFileSync('/etc/hostname', 'utf8'));\n",
  'testing/scripts/hog.py': 'data = bytearray(2 * 1024 * 1024 * 1024)\nprint(len(data))\n',
  'pinned/SKILL.md': '---\nname: Pinned\ndescription: pinned at 2\nversion: "1"\n---\nbody',
  'broken/README.md': 'no SKILL.md here',
};

/** Live processes (zombies have no command line) whose command line is exactly `argv`. */
function processesRunning(argv: string[]): number {
  const want = `${argv.join('\0')}\0`;
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === want) n++;
    } catch {
      // Gone meanwhile.
    }
  }
  return n;
}

describe('skill sandbox over the bus', () => {
  let h: SandboxHarness;
  beforeAll(async () => {
    process.env.AGENTLOOP_TEST_SECRET = 'do-not-leak-4242';
    h = await startSandboxHarness({ skillsYaml: SKILLS_YAML, files: TEST_SKILLS, env: { SKILL_SCRIPT_MAX_OUTPUT_BYTES: '1024' } });
    await mkdir(path.join(h.workspace(), 'uploads'), { recursive: true });
    await writeFile(path.join(h.workspace(), 'uploads', 'data.csv'), 'item,price,note\napple,2,"fresh, red"\npear,4,x\nbad,n/a,y\n');
  });
  afterAll(async () => {
    delete process.env.AGENTLOOP_TEST_SECRET;
    await h?.[Symbol.asyncDispose]();
  });

  describe('agentloop.skills.list', () => {
    it('lists the skills a tenant may use with their skills.yaml settings, skipping broken and mismatched ones', async () => {
      const res = await h.listSkills('acme');
      expect(res.error).toBeUndefined();
      expect(res.skills.map((s) => s.id)).toEqual(['csv-stats', 'docx', 'pdf', 'pptx', 'testing', 'xlsx']);
      expect(res.skills.find((s) => s.id === 'pdf')).toMatchObject({ enabled: false, name: 'pdf', availableToSubagent: false });
      expect(res.skills.find((s) => s.id === 'csv-stats')).toMatchObject({
        enabled: true,
        availableToSubagent: true,
        autoLoadOnFileTypes: ['csv'],
        scripts: ['stats.mjs', 'stats.py'],
        version: '1.1',
        hasRequirements: false,
      });
    });

    it('applies per-tenant allowlists', async () => {
      expect((await h.listSkills('globex')).skills.map((s) => s.id)).toEqual(['csv-stats']);
      expect((await h.listSkills('nobody')).skills).toEqual([]);
    });

    it('refuses a request whose body names another tenant than its header', async () => {
      const res = await h.listSkills('acme', { [Headers.tenant]: 'globex' });
      expect(res.error).toMatchObject({ code: 'PERMISSION_DENIED' });
    });
  });

  describe('agentloop.skills.load', () => {
    it('links skills/<id> to the skill folder, idempotently, and reports no dependencies to install', async () => {
      const res = await h.loadSkill('acme', 'th-load', 'docx');
      expect(res.error).toBeUndefined();
      expect(res).toMatchObject({ docPath: 'skills/docx/SKILL.md', dependenciesInstalled: true, warning: '' });
      const link = path.join(h.workspace('acme', 'th-load'), 'skills', 'docx');
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
      expect(await readlink(link)).toBe(await realpath(path.join(h.skillsRoot, 'docx')));
      const again = await h.loadSkill('acme', 'th-load', 'docx');
      expect(again.error).toBeUndefined();
      expect(await readlink(link)).toBe(await realpath(path.join(h.skillsRoot, 'docx')));
      expect(await readFile(path.join(h.workspace('acme', 'th-load'), res.docPath), 'utf8')).toContain('# Word documents');
    });

    it('repairs a stale skill link', async () => {
      const link = path.join(h.workspace('acme', 'th-stale'), 'skills', 'pptx');
      await mkdir(path.dirname(link), { recursive: true });
      await symlink('/nonexistent/old-skills/pptx', link);
      expect((await h.loadSkill('acme', 'th-stale', 'pptx')).error).toBeUndefined();
      expect(await readlink(link)).toBe(await realpath(path.join(h.skillsRoot, 'pptx')));
    });

    it('never follows or replaces a pre-existing skills/<id> that is not a link', async () => {
      const planted = path.join(h.workspace('acme', 'th-planted'), 'skills', 'xlsx');
      await mkdir(planted, { recursive: true });
      await writeFile(path.join(planted, 'mine.txt'), 'keep me');
      const res = await h.loadSkill('acme', 'th-planted', 'xlsx');
      expect(res.error).toMatchObject({ code: 'CONFLICT' });
      expect(res.error?.message).toMatch(/skills\/xlsx already exists in the workspace and is not a skill link/);
      expect((await lstat(planted)).isDirectory()).toBe(true);
      expect(await readFile(path.join(planted, 'mine.txt'), 'utf8')).toBe('keep me');
    });

    it("refuses skills outside the tenant's allowlist as if they did not exist", async () => {
      const res = await h.loadSkill('globex', 'th-1', 'docx');
      expect(res.error).toMatchObject({ code: 'NOT_FOUND', message: 'Skill not found: docx. Available skills: csv-stats' });
      expect(existsSync(path.join(h.workspace('globex', 'th-1'), 'skills', 'docx'))).toBe(false);
    });

    it('refuses a skill whose version differs from the pinned one, saying why', async () => {
      const res = await h.loadSkill('acme', 'th-1', 'pinned');
      expect(res.error).toMatchObject({ code: 'PERMISSION_DENIED' });
      expect(res.error?.message).toBe('Skill pinned is version 1 but version 2 is pinned in skills.yaml; it is not available until they match');
      expect((await h.listSkills('acme')).skills.map((s) => s.id)).not.toContain('pinned');
    });

    it('rejects invalid thread ids without touching the file system', async () => {
      const res = await h.loadSkill('acme', '../escape', 'docx');
      expect(res.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(res.error?.message).toMatch(/Invalid thread_id/);
    });
  });

  describe('agentloop.skills.tools.list', () => {
    it('offers skill and run_skill_script with the catalog ("- name: description") in the skill tool', async () => {
      const { tools } = await h.listTools('acme');
      expect(tools.map((t) => t.name)).toEqual(['skill', 'run_skill_script']);
      const skill = tools[0]!;
      expect(skill.description).toContain('- docx: Read and search DOCX files');
      expect(skill.description).toContain('- csv-stats: Compute per-column statistics');
      // pdf is enabled: false in skills.yaml, so it is not in the catalog.
      expect(skill.description).not.toContain('- pdf:');
      expect(skill.metadata).toMatchObject({ category: 'skills', idempotent: false, availableToSubagent: true, enabled: true });
      expect(JSON.parse(skill.parametersJsonSchema)).toMatchObject({ required: ['skill'] });
      expect(JSON.parse(tools[1]!.parametersJsonSchema)).toMatchObject({ required: ['skill_id'] });
      expect(Object.keys((JSON.parse(tools[1]!.parametersJsonSchema) as { properties: object }).properties)).toEqual([
        'skill_id',
        'script_name',
        'module',
        'args',
      ]);
    });

    it("lists only the tenant's skills, only sub-agent skills for a sub-agent, and no tools without skills", async () => {
      const globex = (await h.listTools('globex')).tools[0]!.description;
      expect(globex).toContain('csv-stats: Compute');
      expect(globex).not.toContain('docx: Read');
      const sub = (await h.listTools('acme', true)).tools[0]!.description;
      expect(sub).toContain('csv-stats: Compute');
      expect(sub).not.toContain('docx: Read');
      expect((await h.listTools('nobody')).tools).toEqual([]);
    });
  });

  describe('skill tool', () => {
    it('returns the skill document without its frontmatter and loads the skill into the workspace', async () => {
      const res = await h.execute('skill', { skill: 'testing' });
      expect(res.error).toBeUndefined();
      expect(res.content).toBe('# Skill Testing (skills/testing/SKILL.md)\n\n# Testing\n\nThe body.');
      expect((await lstat(path.join(h.workspace(), 'skills', 'testing'))).isSymbolicLink()).toBe(true);
    });

    it('loads a skill hidden from the catalog when asked by id (an @mention)', async () => {
      expect((await h.execute('skill', { skill: 'pdf' })).content).toMatch(/^# Skill pdf \(skills\/pdf\/SKILL\.md\)/);
    });

    it('answers an unknown skill with an Error listing the available ones', async () => {
      const res = await h.execute('skill', { skill: 'nope' });
      expect(res.content).toBe('Error: Skill not found: nope. Available skills: csv-stats, docx, pptx, testing, xlsx');
      expect(res.error).toMatchObject({ code: 'NOT_FOUND' });
    });

    it('refuses a sub-agent a skill not available to sub-agents', async () => {
      const res = await h.execute('skill', { skill: 'docx' }, { subagent: true });
      expect(res.content).toMatch(/^Error: Skill docx is not available to delegated agents/);
    });

    it('reports bad arguments and unknown tools as "Error: ..." results', async () => {
      expect((await h.execute('skill', {})).content).toBe('Error: Invalid arguments for skill: "skill" (the skill id) is required');
      expect((await h.execute('skill', 'not json')).content).toMatch(/^Error: Invalid arguments for skill: /);
      expect((await h.execute('frobnicate', {})).content).toMatch(/^Error: Unknown tool: frobnicate/);
      // 10,000 nested arrays: refused by the depth limit (it used to be a RangeError, INTERNAL).
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      const deepArgs = await h.execute('run_skill_script', `{"skill_id":"testing","script_name":"echo.py","args":${deep}}`);
      expect(deepArgs.content).toBe(
        'Error: Invalid arguments for run_skill_script: JSON is nested deeper than 64 levels of arrays and objects (the limit); flatten the document',
      );
      expect(deepArgs.error?.code).toBe('INVALID_ARGUMENT');
      const deepString = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'echo.py', args: deep });
      expect(deepString.content).toMatch(
        /^Error: Invalid arguments for run_skill_script: "args" is a string but not JSON \(JSON is nested deeper than 64 levels/,
      );
      const mismatch = await h.execute('skill', { skill: 'docx' }, { headers: { [Headers.tenant]: 'globex' } });
      expect(mismatch.content).toBe('Error: Permission denied: the request names another tenant than its caller');
    });
  });

  describe('run_skill_script', () => {
    it('runs the Python and the Node csv-stats scripts on a CSV in the workspace', async () => {
      for (const script of ['stats.py', 'stats.mjs']) {
        const res = await h.execute('run_skill_script', {
          skill_id: 'csv-stats',
          script_name: script,
          args: { file: 'uploads/data.csv', output: `outputs/${script}.json` },
        });
        expect(res.error, `${script}: ${res.content}`).toBeUndefined();
        const out = JSON.parse(res.content) as {
          rows: number;
          columns: Record<string, { count: number; mean: number; skipped: number; min: number; max: number }>;
        };
        expect(out.rows).toBe(3);
        expect(Object.keys(out.columns)).toEqual(['price']);
        expect(out.columns.price).toMatchObject({ count: 2, mean: 3, skipped: 1, min: 2, max: 4 });
        const written = JSON.parse(await readFile(path.join(h.workspace(), 'outputs', `${script}.json`), 'utf8')) as { rows: number };
        expect(written.rows).toBe(3);
      }
    });

    it('passes args (an object or a JSON string) on stdin and runs in the workspace', async () => {
      const ws = await realpath(h.workspace());
      for (const args of [{ a: 1, b: ['x'] }, '{"a": 1, "b": ["x"]}']) {
        const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'echo.py', args });
        // The cwd is the workspace; its host path is redacted to "." in what the model sees.
        expect(JSON.parse(res.content)).toEqual({ args: { a: 1, b: ['x'] }, cwd: '.' });
        expect(res.content).not.toContain(ws);
      }
      expect((await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'echo.py', args: '{bad' })).content).toMatch(
        /^Error: Invalid arguments for run_skill_script: "args" is a string but not JSON .*pass command-line arguments as an array of strings/,
      );
    });

    it('gives scripts a reduced environment: no secret of the service leaks', async () => {
      for (const script of ['env.py', 'env.mjs']) {
        const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: script });
        expect(res.error, res.content).toBeUndefined();
        const env = JSON.parse(res.content) as Record<string, string>;
        expect(JSON.stringify(env)).not.toContain('do-not-leak-4242');
        expect(env.AGENTLOOP_TEST_SECRET).toBeUndefined();
        const allowed = [
          'PATH',
          'LANG',
          'HOME',
          'TMPDIR',
          'AGENT_WORKSPACE_PATH',
          'AGENT_SKILL_DIR',
          'PYTHONDONTWRITEBYTECODE',
          'PYTHONUNBUFFERED',
          'PYTHONIOENCODING',
          'PYTHONPATH',
          'LC_CTYPE',
          // Set by the bubblewrap sandbox (libs/sandbox): matplotlib's settings and the working directory.
          'MPLCONFIGDIR',
          'MPLBACKEND',
          'PWD',
        ];
        expect(Object.keys(env).filter((k) => !allowed.includes(k))).toEqual([]);
        // The workspace's host path, redacted to "." in the result.
        expect(env.AGENT_WORKSPACE_PATH).toBe('.');
        expect(env.HOME).not.toBe(process.env.HOME);
      }
    });

    it('caps the output with a note', async () => {
      const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'loud.py' });
      expect(res.content).toMatch(/^x{1024}\n\[output truncated at 1024 bytes\]$/);
    });

    it('reports a non-zero exit with the tail of stderr', async () => {
      const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'fail.py' });
      expect(res.content).toBe('Error: Script scripts/fail.py of skill testing failed (exit 3)\n[stderr]\nsomething went wrong');
      expect(res.error).toMatchObject({ code: 'TOOL_FAILED' });
    });

    it('explains a missing Python module (seed 000 §3.5)', async () => {
      const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'missing.py' });
      expect(res.content).toMatch(
        /^Error: Script execution failed: missing dependency\nThe Python module 'nonexistent_module_xyz' is not installed: skill testing has no requirements\.txt/,
      );
      expect(res.content).toContain('skills/testing/requirements.txt');
    });

    it('refuses traversal and anything that is not a script of the skill', async () => {
      const run = async (script_name: string, skill_id = 'csv-stats') => (await h.execute('run_skill_script', { skill_id, script_name })).content;
      const notFound = (name: string) =>
        `Error: Script not found: ${name} is not a script of skill csv-stats. Its scripts (under scripts/): stats.mjs, stats.py`;
      expect(await run('../../testing/scripts/env.mjs')).toBe(notFound('../../testing/scripts/env.mjs'));
      expect(await run('/etc/passwd')).toBe(notFound('/etc/passwd'));
      expect(await run('..')).toBe(notFound('..'));
      expect(await run('other.py')).toBe(notFound('other.py'));
      expect(await run('env.mjs', 'globex-only')).toMatch(/^Error: Skill not found: globex-only/);
      const globex = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'env.mjs' }, { tenantId: 'globex' });
      expect(globex.content).toBe('Error: Skill not found: testing. Available skills: csv-stats');
    });

    it('in bubblewrap (the default isolation), a script reaches no network and sees no process of the service', async () => {
      // Elsewhere no script runs at all (script-isolation.test.ts).
      expect(h.sandbox.isolation.mode, 'skill scripts run only in bubblewrap (scripts/test-prerequisites.sh installs it)').toBe('bubblewrap');
      const server = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        // The sandbox runs in this process: could the script read its environment block?
        const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'probe.py', args: { port, pid: process.pid } });
        expect(JSON.parse(res.content)).toEqual({ net: false, serviceEnviron: false });
      } finally {
        server.close();
      }
    });

    it('refuses a script that was replaced by a symlink after the scan', async () => {
      const script = path.join(h.skillsRoot, 'testing', 'scripts', 'loud.py');
      const saved = await readFile(script, 'utf8');
      await rm(script);
      await symlink(path.join(h.skillsRoot, 'testing', 'scripts', 'env.py'), script);
      try {
        const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'loud.py' });
        expect(res.content).toMatch(/^Error: Script not found: scripts\/loud\.py of skill testing is no longer a regular file in the skill/);
      } finally {
        await rm(script);
        await writeFile(script, saved);
      }
    });

    it.skipIf(!process.allowedNodeEnvironmentFlags.has('--experimental-permission'))(
      'keeps Node scripts to the workspace and the skills (permission model)',
      async () => {
        const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'read-outside.mjs' });
        expect(res.content).toMatch(/^Error: Script scripts\/read-outside\.mjs of skill testing failed \(exit 1\)[\s\S]*ERR_ACCESS_DENIED/);
      },
    );

    it.skipIf(!['/usr/bin/prlimit', '/bin/prlimit'].some((p) => existsSync(p)))('limits the address space of a script (prlimit)', async () => {
      const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'hog.py' });
      expect(res.content).toMatch(/^Error: Script scripts\/hog\.py of skill testing failed \(exit 1(, stopped: memory limit 1 GiB)?\)[\s\S]*MemoryError/);
    });
  });

  it('reload rescans the skills folder: a new skill is listed and appears in the skill tool', async () => {
    await mkdir(path.join(h.skillsRoot, 'fresh'), { recursive: true });
    await writeFile(path.join(h.skillsRoot, 'fresh', 'SKILL.md'), '---\nname: Fresh\ndescription: added while running\n---\n');
    expect((await h.listTools('acme')).tools[0]!.description).not.toContain('Fresh');
    const res = await h.reload();
    expect(res.skills).toContain('fresh');
    expect(res.skipped.map((s) => s.id)).toEqual(['broken']);
    expect(res.configError).toBe('');
    expect((await h.listTools('acme')).tools[0]!.description).toContain('- Fresh: added while running');
    await rm(path.join(h.skillsRoot, 'fresh'), { recursive: true });
    await h.reload();
  });
});

describe('skill sandbox: timeouts', () => {
  let h: SandboxHarness;
  beforeAll(async () => {
    h = await startSandboxHarness({ files: TEST_SKILLS, copyProjectSkills: false, env: { SKILL_SCRIPT_TIMEOUT_MS: '1500' } });
  });
  afterAll(async () => h?.[Symbol.asyncDispose]());

  it('kills a script that runs past the timeout, and the processes it started', async () => {
    const res = await h.execute('run_skill_script', { skill_id: 'testing', script_name: 'sleep.py' });
    expect(res.content).toBe('Error: Script scripts/sleep.py of skill testing did not finish within 1500 ms and was stopped (with every process it started)');
    expect(res.error).toMatchObject({ code: 'TIMEOUT' });
    expect(await readFile(path.join(h.workspace(), 'outputs', 'child.started'), 'utf8')).toBe('yes');
    // SIGKILL went to the whole process group; wait for the kernel to finish the grandchild off.
    await vi.waitFor(() => expect(processesRunning(['sleep', '300.4242'])).toBe(0), { timeout: 10_000, interval: 50 });
  });
});

describe('skill sandbox: dependencies', () => {
  let h: SandboxHarness;
  let wheels: string;
  afterEach(async () => h?.[Symbol.asyncDispose]());

  /** A minimal pure-Python wheel built with the standard library, so pip needs no network. */
  async function buildWheel(dir: string): Promise<void> {
    const { execFileSync } = await import('node:child_process');
    await mkdir(dir, { recursive: true });
    const py = `
import sys, zipfile
name, ver = "agentloop_testdep", "1.0"
di = f"{name}-{ver}.dist-info"
files = {f"{name}/__init__.py": "VALUE = 42\\n",
         f"{di}/METADATA": f"Metadata-Version: 2.1\\nName: agentloop-testdep\\nVersion: {ver}\\n",
         f"{di}/WHEEL": "Wheel-Version: 1.0\\nGenerator: agentloop-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
files[f"{di}/RECORD"] = "".join(f"{p},,\\n" for p in files) + f"{di}/RECORD,,\\n"
with zipfile.ZipFile(sys.argv[1] + f"/{name}-{ver}-py3-none-any.whl", "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
`;
    execFileSync('python3', ['-c', py, dir]);
  }

  it('a skill without requirements.txt loads with dependencies_installed and no warning', async () => {
    h = await startSandboxHarness({ files: TEST_SKILLS, copyProjectSkills: false });
    expect(await h.loadSkill('acme', 'th-1', 'testing')).toMatchObject({ dependenciesInstalled: true, warning: '' });
  });

  it('a failed install is a friendly warning, not an error: the skill still loads', async () => {
    h = await startSandboxHarness({
      copyProjectSkills: false,
      files: {
        'needs/SKILL.md': '---\nname: Needs\ndescription: has dependencies\n---\n',
        // --no-index: pip looks nowhere, fails at once, and never touches the network.
        'needs/requirements.txt': '--no-index\nagentloop-no-such-package==1.0\n',
      },
    });
    const res = await h.loadSkill('acme', 'th-1', 'needs');
    expect(res.error).toBeUndefined();
    expect(res.docPath).toBe('skills/needs/SKILL.md');
    expect(res.dependenciesInstalled).toBe(false);
    expect(res.warning).toMatch(
      /^Dependencies of skill needs \(skills\/needs\/requirements\.txt\) could not be installed: a package is not available from the configured index; configure the index .*agentloop-no-such-package/,
    );
    expect(res.warning).toContain('its scripts may fail with a missing module');
    expect((await lstat(path.join(h.workspace(), 'skills', 'needs'))).isSymbolicLink()).toBe(true);
    // The skill tool still returns the document, with the warning as a note.
    expect((await h.execute('skill', { skill: 'needs' })).content).toMatch(/> Note: Dependencies of skill needs/);
  });

  it("installs requirements.txt once into the cache and puts it on the script's PYTHONPATH", async () => {
    const { createTempDir } = await import('@agentloop/workspace');
    const tmp = await createTempDir('agentloop-wheels-');
    wheels = tmp.path;
    try {
      await buildWheel(wheels);
      h = await startSandboxHarness({
        copyProjectSkills: false,
        files: {
          'dep/SKILL.md': '---\nname: Dep\ndescription: uses a dependency\n---\n',
          'dep/requirements.txt': `--no-index\n--find-links ${wheels}\nagentloop-testdep==1.0\n`,
          'dep/scripts/use.py': 'import agentloop_testdep\nprint(agentloop_testdep.VALUE)\n',
        },
      });
      const first = await h.loadSkill('acme', 'th-1', 'dep');
      expect(first).toMatchObject({ dependenciesInstalled: true, warning: '' });
      const cached = (await import('node:fs')).readdirSync(h.cacheRoot).filter((d) => !d.startsWith('.'));
      expect(cached).toHaveLength(1);
      expect(await h.loadSkill('acme', 'th-2', 'dep')).toMatchObject({ dependenciesInstalled: true });
      expect((await import('node:fs')).readdirSync(h.cacheRoot).filter((d) => !d.startsWith('.'))).toEqual(cached);
      const res = await h.execute('run_skill_script', { skill_id: 'dep', script_name: 'use.py' });
      expect(res.content).toBe('42');
    } finally {
      await tmp[Symbol.asyncDispose]();
    }
  });
});

describe('skill sandbox: configuration', () => {
  it('a reload with an invalid skills.yaml keeps the previous configuration and says why', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: TEST_SKILLS, skillsYaml: 'tenants:\n  globex: { allow: [] }\n' });
    await writeFile(h.skillsConfig, 'optional:\n  testing: { enabled: maybe }\n');
    const res = await h.reload();
    expect(res.configError).toMatch(/skills\.yaml is invalid: optional\.testing\.enabled/);
    expect((await h.listSkills('globex')).skills).toEqual([]);
  });

  it('an invalid skills.yaml stops the start with a ConfigError', async () => {
    await expect(startSandboxHarness({ copyProjectSkills: false, skillsYaml: 'global: { enabled: 3 }' })).rejects.toThrow(
      /skills\.yaml is invalid: global\.enabled/,
    );
  });

  it('with SKILLS_WATCH, a skill added to the folder is picked up without a reload request', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: TEST_SKILLS, env: { SKILLS_WATCH: 'true', SKILLS_WATCH_DEBOUNCE_MS: '50' } });
    await mkdir(path.join(h.skillsRoot, 'watched'));
    await writeFile(path.join(h.skillsRoot, 'watched', 'SKILL.md'), '---\nname: Watched\ndescription: seen by the watcher\n---\n');
    await vi.waitFor(async () => expect((await h.listSkills('acme')).skills.map((s) => s.id)).toContain('watched'), { timeout: 10_000, interval: 100 });
  });

  it('with skills switched off, nothing is offered', async () => {
    await using h = await startSandboxHarness({ copyProjectSkills: false, files: TEST_SKILLS, skillsYaml: 'global: { enabled: false }' });
    expect((await h.listTools('acme')).tools).toEqual([]);
    expect((await h.listSkills('acme')).skills).toEqual([]);
    expect((await h.execute('skill', { skill: 'testing' })).content).toBe('Error: Skills are switched off (skills.yaml global.enabled is false)');
  });
});
