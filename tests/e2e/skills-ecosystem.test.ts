/**
 * Skills from the ecosystem, end to end (embedded): fixture skills shaped like Anthropic's
 * published ones (skill-fixtures.ts) are loaded in a scripted run; their scripts run as their
 * authors wrote them (argv, a sub-folder, `python -m scripts.x`, a helper imported from the
 * script's folder, requirements.txt installed into the dependency cache) and fill an uploaded
 * fillable PDF into outputs/; SKILL.md's REFERENCE.md resolves to reference.md; the skill's
 * allowed-tools narrows the run while it is active. docs/skills-ecosystem.md describes the contract.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';
import { fillablePdf, pdfFieldValues, writeFixtureSkills } from './skill-fixtures.js';

type Msg = { type: string; content: string; name?: string; status?: string; response_metadata?: { seen?: { tools?: string[] } } };

/** pypdf must be installable by pip as configured on this machine (an index, a wheel folder). */
function pypdfInstallable(): string | undefined {
  const probe = mkdtempSync(path.join(tmpdir(), 'agentloop-pip-probe-'));
  try {
    execFileSync('python3', ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', probe, 'pypdf'], { stdio: 'ignore', timeout: 120_000 });
    return undefined;
  } catch {
    return 'python3 with pip that can find pypdf (a configured index or wheel folder) is required';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const skipReason = pypdfInstallable();
const skillsRoot = mkdtempSync(path.join(tmpdir(), 'agentloop-ecosystem-skills-'));
writeFixtureSkills(skillsRoot);
const skillsConfig = path.join(skillsRoot, '..', `${path.basename(skillsRoot)}.yaml`);
writeFileSync(skillsConfig, 'optional:\n  pdf-forms:\n    version: "1.2"   # pinned on metadata.version\nenvironments:\n  forms: { skills: [pdf-forms] }\n');
const skillsCache = mkdtempSync(path.join(tmpdir(), 'agentloop-ecosystem-deps-'));
afterAll(() => {
  rmSync(skillsRoot, { recursive: true, force: true });
  rmSync(skillsConfig, { force: true });
  rmSync(skillsCache, { recursive: true, force: true });
});

/** A small ZIP (an Office document is one), made with Python's zipfile. */
function zipOf(files: Record<string, string>): Buffer {
  const code =
    'import io,json,sys,zipfile\nb=io.BytesIO()\nwith zipfile.ZipFile(b,"w") as z:\n  [z.writestr(k,v) for k,v in json.load(sys.stdin).items()]\nsys.stdout.buffer.write(b.getvalue())';
  return execFileSync('python3', ['-c', code], { input: JSON.stringify(files) });
}

describe.skipIf(skipReason !== undefined)(`skills from the ecosystem (embedded)${skipReason ? ` — skipped: ${skipReason}` : ''}`, () => {
  const server = useEmbeddedServer('agentloop-skills-ecosystem-', { SKILLS_ROOT: skillsRoot, SKILLS_CONFIG: skillsConfig, SKILL_DEPS_TIMEOUT_MS: '300000' });

  async function upload(threadId: string, name: string, bytes: Buffer) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    expect((await fetch(`${server.url}/threads/${threadId}/files`, { method: 'POST', body: form })).status).toBe(201);
  }

  it('a form-filling skill fills an uploaded fillable PDF into outputs/, its scripts run as written', { timeout: 300_000 }, async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    await upload(thread.thread_id, 'form.pdf', fillablePdf(['full_name', 'city']));
    const values = JSON.stringify([
      { field_id: 'full_name', page: 1, value: 'Jane Doe' },
      { field_id: 'city', page: 1, value: 'Lyon' },
    ]);
    const run = (args: Record<string, unknown>) => ({ tool_calls: [{ name: 'run_skill_script', args: { skill_id: 'pdf-forms', ...args } }] });
    const result = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Fill uploads/form.pdf: Jane Doe from Lyon' }] },
      config: scripted([
        { tool_calls: [{ name: 'skill', args: { skill: 'pdf-forms' } }] },
        { tool_calls: [{ name: 'read_file', args: { file_path: 'skills/pdf-forms/forms.md' } }] },
        run({ script_name: 'scripts/check_fillable_fields.py', args: ['uploads/form.pdf'] }),
        run({ module: 'scripts.fields', args: ['uploads/form.pdf', 'temp/field_info.json'] }),
        { tool_calls: [{ name: 'write_file', args: { file_path: 'temp/field_values.json', content: values } }] },
        run({ script_name: 'fill_fillable_fields.py', args: ['uploads/form.pdf'] }),
        run({ script_name: 'fill_fillable_fields.py', args: ['uploads/form.pdf', 'temp/field_values.json', 'outputs/filled.pdf'] }),
        run({ module: 'scripts.fields', args: ['outputs/filled.pdf'] }),
        { tool_calls: [{ name: 'now', args: {} }] },
        { content: 'Filled outputs/filled.pdf' },
      ]),
    })) as { messages: Msg[] };
    const tools = result.messages.filter((m) => m.type === 'tool');
    const [loaded, forms, check, info, written, usage, filled, readBack, refused] = tools;

    // The skill's document, with REFERENCE.md / FORMS.md resolved to the files it ships.
    expect(loaded!.content).toMatch(/^# Skill pdf-forms \(skills\/pdf-forms\/SKILL\.md\)/);
    expect(loaded!.content).toContain('see reference.md');
    expect(loaded!.content).toContain('read forms.md');
    expect(loaded!.content).not.toContain('REFERENCE.md');
    expect(forms!.content).toContain('field_values.json is a list');
    // argv, the module form with the skill folder importable, a workspace file written by a script.
    expect(check!.content).toBe('This PDF has fillable form fields');
    expect(info!.content).toBe('Wrote 2 fields to temp/field_info.json');
    expect(written!.status).not.toBe('error');
    // A script's usage text (stdout) reaches the model when it fails.
    expect(usage!.status).toBe('error');
    expect(usage!.content).toBe(
      'Error: Script scripts/fill_fillable_fields.py of skill pdf-forms failed (exit 1)\n[stdout]\nUsage: fill_fillable_fields.py [input pdf] [field_values.json] [output pdf]',
    );
    expect(filled!.content).toBe('Filled 2 fields into outputs/filled.pdf');
    expect(JSON.parse(readBack!.content)).toEqual({ full_name: 'Jane Doe', city: 'Lyon' });
    // allowed-tools: `now` is not offered once the skill is active, and refused when called anyway.
    expect(refused!.content).toMatch(
      /^Error: Tool now is not allowed while skill pdf-forms is active \(its allowed-tools: read_file, run_skill_script, skill, write_file\)/,
    );
    const ais = result.messages.filter((m) => m.type === 'ai');
    expect(ais[0]!.response_metadata?.seen?.tools).toContain('now');
    expect(ais[1]!.response_metadata?.seen?.tools).not.toContain('now');

    // The output PDF, downloaded and read independently of the skill: the field values are in it.
    const pdf = Buffer.from(await (await fetch(`${server.url}/threads/${thread.thread_id}/files/outputs/filled.pdf`)).arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfFieldValues(pdf)).toEqual({ full_name: 'Jane Doe', city: 'Lyon' });
    // requirements.txt was installed once, into the cache entry of this skill version.
    const cache = path.join(server.dataDir, '.skill-deps');
    expect(readdirSync(cache).filter((d) => d.startsWith('pdf-forms@'))).toEqual([expect.stringMatching(/^pdf-forms@1\.2-[0-9a-f]{16}$/)]);
  });

  it('a script in a sub-folder runs with its own folder importable, and paths outside scripts/ are refused', { timeout: 120_000 }, async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    await upload(thread.thread_id, 'report.docx', zipOf({ '[Content_Types].xml': '<Types/>', 'word/document.xml': '<w:document/>' }));
    const call = (script_name: string, args: unknown) => ({
      tool_calls: [{ name: 'run_skill_script', args: { skill_id: 'office-tools', script_name, args } }],
    });
    const result = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Unpack uploads/report.docx with @office-tools' }] },
      config: scripted([
        call('office/unpack.py', ['uploads/report.docx', 'temp/report']),
        { tool_calls: [{ name: 'read_file', args: { file_path: 'temp/report/word/document.xml' } }] },
        call('../pdf-forms/scripts/fields.py', []),
        { content: 'done' },
      ]),
    })) as { messages: Msg[] };
    const [unpacked, xml, outside] = result.messages.filter((m) => m.type === 'tool');
    expect(unpacked!.content).toBe('[Content_Types].xml\nword/document.xml');
    expect(xml!.content).toContain('<w:document/>');
    expect(outside!.content).toBe(
      'Error: Script not found: ../pdf-forms/scripts/fields.py is not a script of skill office-tools. Its scripts (under scripts/): office/helpers.py, office/unpack.py',
    );
  });

  it("an environment's run sees only its skills; an unknown environment fails the run", { timeout: 120_000 }, async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const result = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'unpack it' }] },
      config: {
        configurable: {
          ...scripted([{ tool_calls: [{ name: 'skill', args: { skill: 'office-tools' } }] }, { content: 'ok' }]).configurable,
          environment: 'forms',
        },
      },
    })) as { messages: Msg[] };
    const [refused] = result.messages.filter((m) => m.type === 'tool');
    expect(refused!.content).toBe('Error: Skill not found: office-tools. Available skills in environment forms: pdf-forms');
    const bad = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'x' }] },
      config: { configurable: { ...scripted([{ content: 'no' }]).configurable, environment: 'nope' } },
    });
    await client.runs.join(thread.thread_id, bad.run_id);
    expect((await client.runs.get(thread.thread_id, bad.run_id)).status).toBe('error');
  });
});

// Cluster mode: the orchestrator reads the catalog (allowed-tools) from the skill sandbox over NATS,
// and the skill's dependencies are installed by the sandbox process into the shared cache.
describe.skipIf(skipReason !== undefined)('skills from the ecosystem (cluster)', () => {
  const cluster = useCluster({ env: { SKILLS_ROOT: skillsRoot, SKILLS_CONFIG: skillsConfig, SKILLS_CACHE: skillsCache, SKILL_DEPS_TIMEOUT_MS: '300000' } });

  it('an argv script of a loaded skill runs through the skill sandbox service, and allowed-tools holds across services', { timeout: 300_000 }, async () => {
    const h = cluster();
    const from = h.logs.length;
    h.start('skill-sandbox', 1);
    await h.waitLog(/skill-sandbox serving/, from, 90_000);
    const client = new Client({ apiUrl: h.url });
    const thread = await client.threads.create();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(fillablePdf(['full_name']))]), 'form.pdf');
    expect((await fetch(`${h.url}/threads/${thread.thread_id}/files`, { method: 'POST', body: form })).status).toBe(201);
    const result = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'check the form' }] },
      config: scripted([
        { tool_calls: [{ name: 'skill', args: { skill: 'pdf-forms' } }] },
        {
          tool_calls: [
            { name: 'run_skill_script', args: { skill_id: 'pdf-forms', script_name: 'scripts/check_fillable_fields.py', args: ['uploads/form.pdf'] } },
          ],
        },
        { tool_calls: [{ name: 'now', args: {} }] },
        { content: 'checked' },
      ]),
    })) as { messages: Msg[] };
    const [loaded, check, refused] = result.messages.filter((m) => m.type === 'tool');
    expect(loaded!.content).toMatch(/^# Skill pdf-forms \(skills\/pdf-forms\/SKILL\.md\)/);
    expect(check!.content).toBe('This PDF has fillable form fields');
    expect(refused!.content).toMatch(/^Error: Tool now is not allowed while skill pdf-forms is active/);
    expect(readdirSync(skillsCache).filter((d) => d.startsWith('pdf-forms@1.2-'))).toHaveLength(1);
    // The script ran in the bubblewrap sandbox: scripts run nowhere else by default (fail closed), so
    // this suite needs a machine where bwrap works (scripts/test-prerequisites.sh installs it).
    const [started] = h.linesOf('skill-sandbox#1').filter((l) => l.includes('script sandbox capabilities'));
    expect((JSON.parse(started!.slice(started!.indexOf('{'))) as { isolation: string }).isolation).toBe('bubblewrap');
    expect(h.linesOf('skill-sandbox#1').some((l) => /"isolation":"bubblewrap".*"msg":"skill script ran"/.test(l))).toBe(true);
  });
});
