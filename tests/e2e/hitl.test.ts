/**
 * Human in the loop end to end (seed 001 Part 7), through the HTTP API only, embedded and as a
 * cluster (approval, orchestrator, tool-runner and gateway as separate processes over NATS): a tool
 * call that needs approval stops the run with a LangGraph interrupt; the thread is `interrupted`
 * and reports it; a resume approves (the call runs) or rejects (the model reads the cancel); the
 * decisions are in the tenant's hash-chained audit trail, which verifies. ask_human asks and the
 * answer becomes the tool result.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string; name?: string };
type Values = { messages: Msg[]; __interrupt__?: Array<{ value: Record<string, unknown> }> };

async function hitlJourney(baseUrl: string, workspaceRoot: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const thread = await client.threads.create();
  const secretWrite = { name: 'write_file', args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' } };

  // 1. The write carries a secret: the run stops before running anything of that step.
  const first = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'save the config' }] },
    config: scripted([{ tool_calls: [secretWrite, { name: 'now', args: {} }] }]),
  })) as Values;
  expect(first.__interrupt__).toHaveLength(1);
  expect(first.__interrupt__![0]!.value).toMatchObject({ type: 'tool_approval', tool: 'write_file', risk_level: 'critical', rule: 'global:critical' });
  expect((await client.threads.get(thread.thread_id)).status).toBe('interrupted');
  const state = await client.threads.getState(thread.thread_id);
  expect(state.next).toEqual(['await_approval']);
  expect(state.tasks[0]?.interrupts).toHaveLength(1);
  const configFile = path.join(workspaceRoot, 'default', thread.thread_id, 'outputs', 'config.env');
  expect(existsSync(configFile)).toBe(false);

  // 2. Approve: the call runs, the model continues.
  const approved = (await client.runs.wait(thread.thread_id, 'agent', {
    command: { resume: { decision: 'approve', by: 'alice@example.com', comment: 'dev key' } },
    config: scripted([{ content: 'Saved.' }]),
  })) as Values;
  expect(approved.__interrupt__).toBeUndefined();
  expect(approved.messages.at(-1)!.content).toBe('Saved.');
  expect(existsSync(configFile)).toBe(true);
  expect((await client.threads.get(thread.thread_id)).status).toBe('idle');

  // 3. Another secret write, rejected: not run; the model reads why.
  await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'also save the prod key' }] },
    config: scripted([{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/prod.env', content: 'password=hunter2' } }] }]),
  });
  const rejected = (await client.runs.wait(thread.thread_id, 'agent', {
    command: { resume: 'reject' },
    config: scripted([{ content: 'Understood, not saving it.' }]),
  })) as Values;
  const cancel = rejected.messages.filter((m) => m.type === 'tool').at(-1)!;
  expect(cancel.content).toMatch(/^Operation cancelled by the user: Sensitive data/);
  expect(existsSync(path.join(workspaceRoot, 'default', thread.thread_id, 'outputs', 'prod.env'))).toBe(false);

  // 4. The audit trail has both decisions, chained, and verifies.
  const audit = (await (await fetch(`${baseUrl}/approvals/audit?thread_id=${thread.thread_id}`)).json()) as { entries: Array<Record<string, unknown>> };
  expect(audit.entries.map((e) => [e.tool, e.decision, e.decided_by])).toEqual([
    ['write_file', 'approved', 'alice@example.com'],
    ['write_file', 'rejected', 'tenant:default'],
  ]);
  expect(audit.entries[1]!.prev_hash).toBe(audit.entries[0]!.hash);
  expect(JSON.stringify(audit)).not.toContain('abc123');
  const verify = (await (await fetch(`${baseUrl}/approvals/audit/verify`)).json()) as { ok: boolean };
  expect(verify.ok).toBe(true);

  // 5. ask_human: the question comes back as an interrupt, the answer as the tool result.
  const asked = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'book a hotel' }] },
    config: scripted([{ tool_calls: [{ name: 'ask_human', args: { question: 'Which city?', default: 'Beijing' } }] }]),
  })) as Values;
  expect(asked.__interrupt__![0]!.value).toMatchObject({ type: 'user_input_request', question: 'Which city?', default: 'Beijing' });
  const answered = (await client.runs.wait(thread.thread_id, 'agent', {
    command: { resume: 'Shanghai' },
    config: scripted([{ content: 'Booking in Shanghai.' }]),
  })) as Values;
  expect(answered.messages.filter((m) => m.type === 'tool').at(-1)).toMatchObject({ name: 'ask_human', content: 'Shanghai' });
  expect(answered.messages.at(-1)!.content).toBe('Booking in Shanghai.');
}

describe('human in the loop (embedded)', () => {
  const server = useEmbeddedServer('agentloop-hitl-');

  it('approval stops the run, approve runs the call, reject cancels it, the audit trail verifies; ask_human gets its answer', async () => {
    await hitlJourney(server.url, path.join(server.dataDir, 'workspaces'));
  });
});

describe('human in the loop (cluster)', () => {
  const cluster = useCluster();

  it('approval stops the run, approve runs the call, reject cancels it, the audit trail verifies; ask_human gets its answer', async () => {
    await hitlJourney(cluster().url, cluster().workspaceRoot);
  }, 120_000);
});
