/**
 * Recorded runs as regression tests (issue 17, README "Record and replay"): every `*.json` in this
 * folder is a run recording (`agentloop record-test <run_id> --out tests/replays/<name>.json`, or
 * `GET /runs/{run_id}/recording`). Each is replayed against an embedded AgentLoop with no model
 * configured — answers and tool results come from the recording — and must not diverge: every
 * model request equals the recorded one, and the run ends on the recorded final answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useEmbeddedServer } from '../e2e/helpers.js';

type Message = { type: string; content: unknown; tool_calls?: Array<{ name: string; args: unknown; id?: string }>; tool_call_id?: string | null };
type ModelCall = { kind: 'model_call'; request: { messages: Message[] }; response: Message };
type Recording = { run_id: string; events: Array<{ kind: string } & Partial<ModelCall>> };

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = readdirSync(here)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** What the replay must reproduce of a message: not its id nor its provider metadata. */
const essence = (m: Message) => ({
  type: m.type,
  content: m.content,
  tool_calls: (m.tool_calls ?? []).map((tc) => ({ name: tc.name, args: tc.args, id: tc.id ?? null })),
  tool_call_id: m.tool_call_id ?? null,
});

/** The recorded run's final messages: what its last model call was shown (without the system prompt), then its answer. */
function recordedEnding(rec: Recording): Message[] {
  const last = rec.events.filter((e): e is ModelCall => e.kind === 'model_call').at(-1);
  if (!last) throw new Error(`recording of run ${rec.run_id} has no model call`);
  return [...last.request.messages.filter((m) => m.type !== 'system'), last.response];
}

describe('recorded runs replay without divergence', () => {
  const server = useEmbeddedServer('agentloop-replays-');

  it('has fixtures to replay', () => {
    expect(fixtures.length).toBeGreaterThan(0);
  });

  it.each(fixtures)('%s', async (file) => {
    const recording = JSON.parse(readFileSync(path.join(here, file), 'utf8')) as Recording;
    // On a thread, as the recorded run was (a stateless run is offered fewer tools: no ask_human).
    const thread = (await (await fetch(`${server.url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as {
      thread_id: string;
    };
    const res = await fetch(`${server.url}/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', replay_recording: recording }),
    });
    const values = (await res.json()) as { messages: Message[] };
    expect(res.status, JSON.stringify(values)).toBe(200);
    const run = (await (await fetch(`${server.url}${res.headers.get('content-location')!}`)).json()) as { status: string; metadata: { replay?: unknown } };
    expect(run.metadata.replay, JSON.stringify(run.metadata.replay)).toMatchObject({ diverged: false });
    expect(run.status).toBe('success');
    const ending = recordedEnding(recording).map(essence);
    expect(values.messages.map(essence).slice(-ending.length)).toEqual(ending);
  });
});
