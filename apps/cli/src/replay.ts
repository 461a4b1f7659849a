/**
 * `agentloop replay` and `agentloop record-test` (issue 17, README "Record and replay"): replay a
 * recorded run on the server and print where it diverged; save a run's recording as a regression
 * test fixture, which tests/replays/replays.test.ts replays against an embedded AgentLoop.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ServerOptions {
  url: string;
  apiKey?: string | undefined;
}

/** What a replay reports (the run's `metadata.replay`). */
export interface ReplayOutcome {
  runId: string;
  threadId: string;
  status: string;
  replay: { of: string; tools: string; diverged: boolean; at?: { step: number; kind: string; path?: string; expected: unknown; actual: unknown } } | undefined;
  answer: string;
}

async function call<T>(server: ServerOptions, method: string, p: string, body?: unknown): Promise<{ body: T; headers: Headers }> {
  const res = await fetch(new URL(p, server.url), {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(server.apiKey ? { 'x-api-key': server.apiKey } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} answered ${res.status}: ${text}`);
  return { body: JSON.parse(text) as T, headers: res.headers };
}

/** Replays `runId` on `threadId` (a new thread when absent) and waits for the end. */
export async function replayRun(server: ServerOptions, runId: string, opts: { executeTools?: boolean; threadId?: string | undefined }): Promise<ReplayOutcome> {
  const threadId = opts.threadId ?? (await call<{ thread_id: string }>(server, 'POST', '/threads', {})).body.thread_id;
  const waited = await call<{ messages?: Array<{ content?: unknown }> }>(server, 'POST', `/threads/${threadId}/runs/wait`, {
    assistant_id: 'agent',
    replay_of: runId,
    replay_tools: opts.executeTools ? 'execute' : 'recorded',
  });
  const runPath = waited.headers.get('content-location');
  if (!runPath) throw new Error('the server did not say which run it created (no Content-Location)');
  const run = (await call<{ run_id: string; status: string; metadata: { replay?: ReplayOutcome['replay'] } }>(server, 'GET', runPath)).body;
  const last = waited.body.messages?.at(-1)?.content;
  return { runId: run.run_id, threadId, status: run.status, replay: run.metadata.replay, answer: typeof last === 'string' ? last : JSON.stringify(last ?? '') };
}

/** The outcome as the CLI prints it. */
export function formatOutcome(o: ReplayOutcome): string {
  const lines = [`replay run ${o.runId} on thread ${o.threadId}: ${o.status}`];
  if (!o.replay) lines.push('no replay outcome was recorded (the run did not get to replay)');
  else if (!o.replay.diverged) lines.push(`no divergence from run ${o.replay.of} (tools: ${o.replay.tools})`);
  else {
    const at = o.replay.at!;
    lines.push(`DIVERGED from run ${o.replay.of} at step ${at.step}: ${at.kind}${at.path ? ` (${at.path})` : ''}`);
    lines.push(`  expected: ${JSON.stringify(at.expected)}`);
    lines.push(`  actual:   ${JSON.stringify(at.actual)}`);
  }
  lines.push(`final answer: ${o.answer}`);
  return lines.join('\n');
}

/** Writes the run's exported recording to `out` (a fixture of tests/replays/). */
export async function saveRecordingFixture(server: ServerOptions, runId: string, out: string): Promise<{ events: number; path: string }> {
  const { body } = await call<{ events: unknown[] }>(server, 'GET', `/runs/${runId}/recording`);
  const file = path.resolve(out);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
  return { events: body.events.length, path: file };
}
