/**
 * Record and replay (issue 17, deliverable 1; README "Record and replay"). A run against a local
 * fake OpenAI-compatible server calls `read_file` on a workspace file and answers with what it read;
 * the run is recorded (embedded default RECORD_RUNS=all), exported, and — with the fake stopped —
 * replayed: with recorded tools it reaches the same final state without divergence; with executed
 * tools after the file changed, the divergence is reported at the tool result with both contents.
 * Cluster: a run that opts in (`config.configurable.record: true`) is recorded in MySQL by the
 * orchestrator process and replayed offline; one that does not is not recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { startCluster, type ClusterHarness } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

type Msg = { type: string; content: unknown; tool_calls?: Array<{ name: string; args: unknown; id: string }>; tool_call_id?: string };
type Values = { messages: Msg[] };

/** The `agentloop` command (built by `tsc -b`, as tests/e2e/cli.test.ts uses it). */
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/cli/bin/agentloop.js');
async function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '' };
  }
}

const modelEnv = (fake: FakeOpenAi) => ({ MODEL_BASE_API_KEY: 'sk-fake', MODEL_BASE_BASE_URL: fake.baseUrl, MODEL_BASE_ID: 'fake-model' });

/** The fake model reads notes.txt, then answers with what the tool returned. */
function startNotesModel(): Promise<FakeOpenAi> {
  return startFakeOpenAi({
    respond: (messages) => {
      const last = messages.at(-1);
      if (last?.role === 'user') return { tool: { name: 'read_file', args: { file_path: 'notes.txt' } } };
      return { answer: `The note says: ${typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content)}` };
    },
  });
}

/** Messages modulo ids, timestamps and provider metadata: what a replay must reproduce. */
const essence = (v: Values) =>
  v.messages.map((m) => ({
    type: m.type,
    content: m.content,
    tool_calls: (m.tool_calls ?? []).map((tc) => ({ name: tc.name, args: tc.args, id: tc.id })),
    tool_call_id: m.tool_call_id ?? null,
  }));

interface Env {
  url: string;
  workspaceRoot: string;
}

async function api<T>(env: Env, method: string, p: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${env.url}${p}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function newThreadWithNote(env: Env, note: string): Promise<string> {
  const t = await api<{ thread_id: string }>(env, 'POST', '/threads', {});
  const dir = path.join(env.workspaceRoot, 'default', t.body.thread_id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'notes.txt'), note);
  return t.body.thread_id;
}

/** Runs to the end (`/runs/wait`) and returns the final values and the run record. */
async function runToEnd(env: Env, threadId: string, body: Record<string, unknown>) {
  const res = await fetch(`${env.url}/threads/${threadId}/runs/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'agent', ...body }),
  });
  const values = (await res.json()) as Values;
  expect(res.status, JSON.stringify(values)).toBe(200);
  const runPath = res.headers.get('content-location')!;
  const run = await api<{ run_id: string; status: string; metadata: Record<string, unknown> }>(env, 'GET', runPath);
  return { values, run: run.body };
}

type Recording = {
  format: string;
  version: number;
  run_id: string;
  input: unknown;
  events: Array<{ kind: string; step: number; at: string } & Record<string, unknown>>;
};

describe('record and replay (embedded)', () => {
  let fake: FakeOpenAi;
  let server: EmbeddedServer;
  let dataDir: string;
  let env: Env;
  let recorded: { values: Values; run: { run_id: string; status: string } };

  beforeAll(async () => {
    fake = await startNotesModel();
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-replay-'));
    server = await startEmbedded({ env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', ...modelEnv(fake) }, port: 0 });
    env = { url: server.url, workspaceRoot: path.join(dataDir, 'workspaces') };
    const thread = await newThreadWithNote(env, 'release on friday');
    recorded = await runToEnd(env, thread, { input: { messages: [{ role: 'user', content: 'what does my note say?' }] } });
    // Every replay below runs without any model reachable.
    await fake.close();
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('records the model calls and the tool call in order, exported as versioned JSON', async () => {
    expect(recorded.run.status).toBe('success');
    expect(recorded.values.messages.at(-1)!.content).toBe('The note says: release on friday');
    const { status, body } = await api<Recording>(env, 'GET', `/runs/${recorded.run.run_id}/recording`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      format: 'agentloop.run-recording',
      version: 1,
      run_id: recorded.run.run_id,
      input: { messages: [{ content: 'what does my note say?' }] },
    });
    expect(body.events.map((e) => [e.kind, e.step])).toEqual([
      ['model_call', 0],
      ['tool_call', 0],
      ['model_call', 1],
    ]);
    const [first, tool, second] = body.events as unknown as [Record<string, any>, Record<string, any>, Record<string, any>];
    expect(first.request.model).toMatchObject({ provider: 'openai-compatible', model_id: 'fake-model' });
    expect(first.request.messages[0].type).toBe('system');
    expect(first.request.messages.at(-1)).toMatchObject({ type: 'human', content: 'what does my note say?' });
    expect(first.request.tools.map((t: { name: string }) => t.name)).toContain('read_file');
    expect(first.response.tool_calls[0]).toMatchObject({ name: 'read_file', args: { file_path: 'notes.txt' } });
    expect(first.response.usage_metadata.input_tokens).toBeGreaterThan(0);
    expect(tool.call).toMatchObject({ name: 'read_file', args: { file_path: 'notes.txt' }, id: first.response.tool_calls[0].id });
    expect(tool.result).toMatchObject({ is_error: false });
    expect(tool.result.content).toContain('release on friday');
    expect(second.response.content).toBe('The note says: release on friday');
    expect(Date.parse(tool.started_at)).toBeLessThanOrEqual(Date.parse(tool.ended_at));
    // The thread-scoped form answers the same document.
    const threadScoped = await api<Recording>(
      env,
      'GET',
      `/threads/${(await api<{ thread_id: string }>(env, 'GET', `/runs/${recorded.run.run_id}/recording`)).body.thread_id}/runs/${recorded.run.run_id}/recording`,
    );
    expect(threadScoped.body.events).toEqual(body.events);
  });

  it('replays with recorded tools, the model stopped: same final state, no divergence', async () => {
    const thread = (await api<{ thread_id: string }>(env, 'POST', '/threads', {})).body.thread_id;
    const replay = await runToEnd(env, thread, { replay_of: recorded.run.run_id });
    expect(replay.run.status).toBe('success');
    expect(essence(replay.values)).toEqual(essence(recorded.values));
    expect(replay.run.metadata.replay).toEqual({ of: recorded.run.run_id, tools: 'recorded', diverged: false });
  });

  it('replays on the recorded run’s own thread: the history is kept and the longer request is reported', async () => {
    const original = (await api<{ thread_id: string }>(env, 'GET', `/runs/${recorded.run.run_id}/recording`)).body.thread_id;
    const replay = await runToEnd(env, original, { replay_of: recorded.run.run_id });
    // The recorded run's messages are still there, the replay's follow them.
    expect(essence(replay.values).slice(0, recorded.values.messages.length)).toEqual(essence(recorded.values));
    expect(replay.values.messages).toHaveLength(2 * recorded.values.messages.length);
    expect(replay.run.metadata.replay).toMatchObject({
      diverged: true,
      at: { step: 0, kind: 'model_request', path: 'messages', expected: '2 messages', actual: '6 messages' },
    });
  });

  it('replays through /runs/stream too: the recorded answer arrives as events', async () => {
    const thread = (await api<{ thread_id: string }>(env, 'POST', '/threads', {})).body.thread_id;
    const res = await fetch(`${env.url}/threads/${thread}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', replay_of: recorded.run.run_id, stream_mode: ['values', 'messages-tuple'] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const values = text
      .split('\n\n')
      .filter((block) => block.includes('event: values'))
      .map(
        (block) =>
          JSON.parse(
            block
              .split('\n')
              .find((l) => l.startsWith('data: '))!
              .slice(6),
          ) as Values,
      );
    expect(essence(values.at(-1)!)).toEqual(essence(recorded.values));
    expect(text).not.toContain('event: error');
  });

  it('replays with executed tools after the file changed: the divergence is at the tool result', async () => {
    const thread = await newThreadWithNote(env, 'release on monday');
    const replay = await runToEnd(env, thread, { replay_of: recorded.run.run_id, replay_tools: 'execute' });
    const report = replay.run.metadata.replay as {
      diverged: boolean;
      at: { step: number; kind: string; expected: { content: string }; actual: { content: string } };
    };
    expect(report.diverged).toBe(true);
    expect(report.at).toMatchObject({ step: 0, kind: 'tool_result' });
    expect(report.at.expected.content).toContain('release on friday');
    expect(report.at.actual.content).toContain('release on monday');
    // The replay went on from the recording: the recorded answer still ends it.
    expect(replay.values.messages.at(-1)!.content).toBe('The note says: release on friday');
  });

  it('replays an exported recording given inline (what a record-test fixture does)', async () => {
    const exported = (await api<Recording>(env, 'GET', `/runs/${recorded.run.run_id}/recording`)).body;
    const thread = (await api<{ thread_id: string }>(env, 'POST', '/threads', {})).body.thread_id;
    const replay = await runToEnd(env, thread, { replay_recording: exported });
    expect(replay.run.metadata.replay).toMatchObject({ diverged: false, tools: 'recorded' });
    expect(essence(replay.values)).toEqual(essence(recorded.values));
  });

  it('CLI: `replay --execute-tools` prints the divergence and exits 3; `record-test` writes a fixture', async () => {
    const thread = await newThreadWithNote(env, 'release on monday');
    const diverged = await cli('replay', recorded.run.run_id, '--execute-tools', '--thread', thread, '--url', env.url);
    expect(diverged.code).toBe(3);
    expect(diverged.stdout).toContain(`DIVERGED from run ${recorded.run.run_id} at step 0: tool_result`);
    expect(diverged.stdout).toContain('release on monday');
    const same = await cli('replay', recorded.run.run_id, '--url', env.url);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('no divergence');
    const out = path.join(dataDir, 'fixtures', 'read-note.json');
    const saved = await cli('record-test', recorded.run.run_id, '--out', out, '--url', env.url);
    expect(saved.code).toBe(0);
    const fixture = JSON.parse(readFileSync(out, 'utf8')) as Recording;
    expect(fixture).toMatchObject({ format: 'agentloop.run-recording', version: 1, run_id: recorded.run.run_id });
    expect(fixture.events).toHaveLength(3);
  });

  it('records a delegated agent as its own run, linked to its parent run', async () => {
    const thread = (await api<{ thread_id: string }>(env, 'POST', '/threads', {})).body.thread_id;
    const parent = await runToEnd(env, thread, {
      input: { messages: [{ role: 'user', content: '@general say hi' }] },
      config: {
        configurable: {
          model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'say hi' } }] }, { content: 'the child said hi' }] },
          delegates: { '*': [{ content: 'hi from the child' }] },
        },
      },
    });
    expect(parent.run.status).toBe('success');
    const children = (await api<Array<{ run_id: string }>>(env, 'GET', `/runs/${parent.run.run_id}/children`)).body;
    expect(children).toHaveLength(1);
    const child = (await api<Recording & { parent_run_id: string }>(env, 'GET', `/runs/${children[0]!.run_id}/recording`)).body;
    expect(child.parent_run_id).toBe(parent.run.run_id);
    expect(child.events.map((e) => e.kind)).toEqual(['model_call']);
    expect((child.events[0] as { response?: { content?: string } }).response?.content).toBe('hi from the child');
    const parentRec = (await api<Recording>(env, 'GET', `/runs/${parent.run.run_id}/recording`)).body;
    expect(parentRec.events.map((e) => [e.kind, e.step])).toEqual([
      ['model_call', 0],
      ['model_call', 1],
    ]);
  });

  it('refuses bad replay requests naming the field; an unknown run is not found', async () => {
    const thread = (await api<{ thread_id: string }>(env, 'POST', '/threads', {})).body.thread_id;
    const withInput = await api<{ message?: string; detail?: unknown }>(env, 'POST', `/threads/${thread}/runs`, {
      assistant_id: 'agent',
      replay_of: recorded.run.run_id,
      input: { messages: [{ role: 'user', content: 'x' }] },
    });
    expect(withInput.status).toBe(422);
    expect(JSON.stringify(withInput.body)).toContain('body.input');
    const badTools = await api(env, 'POST', `/threads/${thread}/runs`, { assistant_id: 'agent', replay_of: recorded.run.run_id, replay_tools: 'maybe' });
    expect(badTools.status).toBe(422);
    expect(JSON.stringify(badTools.body)).toContain('replay_tools');
    const unknown = await api(env, 'POST', `/threads/${thread}/runs`, { assistant_id: 'agent', replay_of: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect((await api(env, 'GET', '/runs/00000000-0000-4000-8000-000000000000/recording')).status).toBe(404);
    const badInline = await api(env, 'POST', `/threads/${thread}/runs`, {
      assistant_id: 'agent',
      replay_recording: { format: 'agentloop.run-recording', version: 99 },
    });
    expect(badInline.status).toBe(422);
    expect(JSON.stringify(badInline.body)).toContain('replay_recording.version');
  });
});

describe('record and replay (cluster: the orchestrator records in MySQL)', () => {
  let fake: FakeOpenAi;
  let cluster: ClusterHarness;
  let env: Env;

  beforeAll(async () => {
    fake = await startNotesModel();
    cluster = await startCluster({ env: modelEnv(fake) });
    env = { url: cluster.url, workspaceRoot: cluster.workspaceRoot };
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await fake?.close().catch(() => undefined);
  });

  it('records a run that opts in (not one that does not), and replays it with the model stopped', async () => {
    const input = { messages: [{ role: 'user', content: 'what does my note say?' }] };
    const optedIn = await runToEnd(env, await newThreadWithNote(env, 'ship it'), { input, config: { configurable: { record: true } } });
    const notRecorded = await runToEnd(env, await newThreadWithNote(env, 'ship it'), { input });
    expect(optedIn.run.status).toBe('success');
    const recording = await api<Recording>(env, 'GET', `/runs/${optedIn.run.run_id}/recording`);
    expect(recording.status).toBe(200);
    expect(recording.body.events.map((e) => e.kind)).toEqual(['model_call', 'tool_call', 'model_call']);
    expect((await api(env, 'GET', `/runs/${notRecorded.run.run_id}/recording`)).status).toBe(404);

    await fake.close();
    const thread = (await api<{ thread_id: string }>(env, 'POST', '/threads', {})).body.thread_id;
    const replay = await runToEnd(env, thread, { replay_of: optedIn.run.run_id });
    expect(replay.run.metadata.replay).toEqual({ of: optedIn.run.run_id, tools: 'recorded', diverged: false });
    expect(essence(replay.values)).toEqual(essence(optedIn.values));
  }, 120_000);
});
