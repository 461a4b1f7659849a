/**
 * Human in the loop as LangGraph clients see it (issue 11, deliverable 4), through the official SDK,
 * embedded and as a cluster: a run streamed the way agent-chat-ui asks for it
 * (`streamMode ["values","messages-tuple","custom"]`) that stops for a tool approval streams a
 * values event holding only `__interrupt__`, whose value carries langchain v1's `action_requests`
 * and `review_configs` beside AgentLoop's fields; resumes in the `{decisions: [...]}` form approve,
 * edit (the edited call runs, is re-checked and audited; another tool is refused) and reject with a
 * message (the model reads it); the thread, made with a bare `POST /threads`, is found by
 * `threads.search({metadata: {graph_id: "agent"}})`.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string; name?: string; status?: string };
type Interrupt = { id?: string; value: Record<string, unknown> };
type Values = { messages: Msg[]; __interrupt__?: Interrupt[] };

const DEFAULT_ASSISTANT_ID = 'fe096781-5601-53d2-b2f6-0d3403f7e9ca';
const UI_STREAM_MODES = ['values', 'messages-tuple', 'custom'] as const;

/** Streams a run as agent-chat-ui does; every event, in order. */
async function streamRun(client: Client, threadId: string, payload: Record<string, unknown>): Promise<Array<{ event: string; data: unknown }>> {
  const events: Array<{ event: string; data: unknown }> = [];
  for await (const chunk of client.runs.stream(threadId, 'agent', { ...payload, streamMode: [...UI_STREAM_MODES] }))
    events.push({ event: chunk.event, data: chunk.data });
  return events;
}

async function langchainHitlJourney(baseUrl: string, workspaceRoot: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const thread = await client.threads.create();
  const tid = thread.thread_id;
  const outputs = path.join(workspaceRoot, 'default', tid, 'outputs');
  const secretWrite = (file: string) => ({ name: 'write_file', args: { file_path: `outputs/${file}`, content: 'API_KEY=abc123' } });

  // Before any run the thread has no graph: the UI's history would not list it.
  expect((await client.threads.search({ metadata: { graph_id: 'agent' }, limit: 100 })).map((t) => t.thread_id)).not.toContain(tid);

  // 1. Streamed as agent-chat-ui asks: the stop arrives as a values event holding only __interrupt__.
  const events = await streamRun(client, tid, {
    input: { messages: [{ role: 'user', content: 'save the config' }] },
    config: scripted([{ tool_calls: [secretWrite('config.env')] }]),
  });
  const values = events.filter((e) => e.event === 'values').map((e) => e.data as Record<string, unknown>);
  const interruptOnly = values.filter((v) => Object.keys(v).length === 1 && '__interrupt__' in v);
  expect(interruptOnly).toHaveLength(1);
  // Never the values filter's `{messages: []}` (agent-chat-ui: "Cannot read properties of undefined (reading 'id')").
  expect(values.every((v) => !Array.isArray(v.messages) || v.messages.length > 0)).toBe(true);
  const [streamed] = interruptOnly[0]!.__interrupt__ as Interrupt[];
  expect(streamed!.id).toEqual(expect.any(String));
  expect(streamed!.value).toMatchObject({
    type: 'tool_approval',
    tool: 'write_file',
    risk_level: 'critical',
    action_requests: [{ name: 'write_file', args: secretWrite('config.env').args, description: expect.stringContaining('write_file') }],
    review_configs: [{ action_name: 'write_file', allowed_decisions: ['approve', 'edit', 'reject'] }],
  });
  expect((await client.threads.get(tid)).status).toBe('interrupted');
  // The run stamped its graph and assistant into the thread's metadata (agent-chat-ui's thread list).
  expect((await client.threads.get(tid)).metadata).toMatchObject({ graph_id: 'agent', assistant_id: DEFAULT_ASSISTANT_ID });
  expect((await client.threads.search({ metadata: { graph_id: 'agent' }, limit: 100 })).map((t) => t.thread_id)).toContain(tid);

  // 2. Approve in the langchain v1 form: the call runs.
  const approved = (await client.runs.wait(tid, 'agent', {
    command: { resume: { decisions: [{ type: 'approve' }] } },
    config: scripted([{ content: 'Saved.' }]),
  })) as Values;
  expect(approved.__interrupt__).toBeUndefined();
  expect(approved.messages.at(-1)!.content).toBe('Saved.');
  expect(readFileSync(path.join(outputs, 'config.env'), 'utf8')).toBe('API_KEY=abc123');

  // 3. Edit: another tool is refused (asked again, saying why); same tool, new arguments: the edited call runs.
  await client.runs.wait(tid, 'agent', {
    input: { messages: [{ role: 'user', content: 'save the staging key' }] },
    config: scripted([{ tool_calls: [secretWrite('staging.env')] }]),
  });
  const refused = (await client.runs.wait(tid, 'agent', {
    command: { resume: { decisions: [{ type: 'edit', edited_action: { name: 'shell', args: { command: 'echo hi' } } }] } },
    config: scripted([{ content: 'not reached' }]),
  })) as Values;
  expect(refused.__interrupt__![0]!.value).toMatchObject({ tool: 'write_file', error: expect.stringContaining('edit refused') });
  const edited = (await client.runs.wait(tid, 'agent', {
    command: {
      resume: {
        decisions: [{ type: 'edit', edited_action: { name: 'write_file', args: { file_path: 'outputs/staging.example', content: 'API_KEY=<fill in>' } } }],
        by: 'carol@example.com',
      },
    },
    config: scripted([{ content: 'Saved a template instead.' }]),
  })) as Values;
  expect(edited.__interrupt__).toBeUndefined();
  expect(readFileSync(path.join(outputs, 'staging.example'), 'utf8')).toBe('API_KEY=<fill in>');
  expect(existsSync(path.join(outputs, 'staging.env'))).toBe(false);

  // 4. Reject with a message: not run; the model's tool result says so, with the message.
  await client.runs.wait(tid, 'agent', {
    input: { messages: [{ role: 'user', content: 'and the prod key' }] },
    config: scripted([{ tool_calls: [secretWrite('prod.env')] }]),
  });
  const rejected = (await client.runs.wait(tid, 'agent', {
    command: { resume: { decisions: [{ type: 'reject', message: 'never write prod keys to disk' }] } },
    config: scripted([{ content: 'Understood.' }]),
  })) as Values;
  const cancel = rejected.messages.filter((m) => m.type === 'tool').at(-1)!;
  expect(cancel).toMatchObject({ name: 'write_file', status: 'error' });
  expect(cancel.content).toContain('cancelled by the user');
  expect(cancel.content).toContain('never write prod keys to disk');
  expect(existsSync(path.join(outputs, 'prod.env'))).toBe(false);

  // 5. The audit trail: approve, the edit (recorded with the edited call, by its approver) and the rejection with its message.
  const audit = (await (await fetch(`${baseUrl}/approvals/audit?thread_id=${tid}`)).json()) as { entries: Array<Record<string, unknown>> };
  expect(audit.entries.map((e) => [e.tool, e.decision, e.decided_by])).toEqual([
    ['write_file', 'approved', 'tenant:default'],
    ['write_file', 'approved', 'carol@example.com'],
    ['write_file', 'rejected', 'tenant:default'],
  ]);
  expect(audit.entries[1]!.comment).toMatch(/^edited by carol@example\.com: the recorded arguments are the edited ones \(re-checked: allow/);
  expect(audit.entries[2]!.comment).toBe('never write prod keys to disk');
  expect(JSON.stringify(audit)).not.toContain('abc123');
  expect(((await (await fetch(`${baseUrl}/approvals/audit/verify`)).json()) as { ok: boolean }).ok).toBe(true);
}

describe('langchain v1 human in the loop through the SDK (embedded)', () => {
  const server = useEmbeddedServer('agentloop-hitl-lc-');

  it('interrupt-only values event with action_requests; approve, edit and reject decisions; thread found by graph_id', async () => {
    await langchainHitlJourney(server.url, path.join(server.dataDir, 'workspaces'));
  }, 60_000);
});

describe('langchain v1 human in the loop through the SDK (cluster)', () => {
  const cluster = useCluster();

  it('interrupt-only values event with action_requests; approve, edit and reject decisions; thread found by graph_id', async () => {
    await langchainHitlJourney(cluster().url, cluster().workspaceRoot);
  }, 120_000);
});
