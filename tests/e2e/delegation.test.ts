/**
 * Delegated agents (seed 001 Part 5), end to end in embedded mode and in
 * cluster mode (separate processes over NATS, Redis, MariaDB), each with ONE
 * worker slot (RUN_CONCURRENCY=1): a parent calls delegate_task twice in one
 * step; each child writes a file to the shared outputs/ and answers; the
 * parent reads both files and answers. The children can only run if the
 * suspended parent released its slot. How that is measured: the orchestrator's
 * runs handler logs `job started` / `job ended` with `active` (jobs executing
 * in the worker at that instant); the test captures those log lines and checks
 * the maximum and the order of jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { createLogger } from '@agentloop/core';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { poll, startCluster, startWebhookReceiver, type ClusterHarness } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

interface Msg {
  type: string;
  content: string;
  name?: string;
  status?: string;
  tool_call_id?: string;
  additional_kwargs?: Record<string, unknown>;
}

interface LogLine {
  msg: string;
  run_id?: string;
  job_id?: string;
  active?: number;
  [k: string]: unknown;
}

const TASK_A = 'Write outputs/a.txt containing alpha';
const TASK_B = 'Write outputs/b.txt containing beta';

/** The parent: two delegate_task calls in one step, then it reads both files and answers. */
const PARENT_TURNS = [
  {
    tool_calls: [
      { name: 'delegate_task', args: { task: TASK_A } },
      { name: 'delegate_task', args: { task: TASK_B, max_loops: 5 } },
    ],
  },
  {
    tool_calls: [
      { name: 'read_file', args: { file_path: 'outputs/a.txt' } },
      { name: 'read_file', args: { file_path: 'outputs/b.txt' } },
    ],
  },
  { content: 'Both subtasks are done: a.txt says alpha, b.txt says beta.' },
];

/** Each child's script: by task text for the first, by index ("1") for the second. */
const DELEGATES = {
  // The delay keeps child A running long enough for the test to look at its parent meanwhile.
  [TASK_A]: [
    { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/a.txt', content: 'alpha' } }] },
    { content: 'Wrote outputs/a.txt (alpha).', delay_ms: 500 },
  ],
  '1': [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/b.txt', content: 'beta' } }] }, { content: 'Wrote outputs/b.txt (beta).' }],
};

/**
 * The two-children scenario against a running deployment. `workspaces` is the
 * tenant folder of workspaces; `lines` returns the log lines captured so far.
 */
async function twoChildrenScenario(mode: string, url: string, workspaces: string, lines: () => LogLine[]): Promise<void> {
  const client = new Client({ apiUrl: url });
  const receiver = await startWebhookReceiver();
  try {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: '@general split this into two subtasks' }] },
      config: { configurable: { model: { provider: 'scripted', turns: PARENT_TURNS }, delegates: DELEGATES } },
      webhook: receiver.url,
    });
    // While a child runs, the suspended parent is still `running` to the client (and has not fired its webhook).
    const busyChild = await poll(
      async () => {
        const list = (await (await fetch(`${url}/runs/${run.run_id}/children`)).json()) as Array<{ status: string }>;
        return list.find((c) => c.status === 'running');
      },
      20_000,
      20,
    );
    expect(busyChild).toBeDefined();
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('running');
    expect(receiver.deliveries).toHaveLength(0);

    await client.runs.join(thread.thread_id, run.run_id);
    const finalRun = await client.runs.get(thread.thread_id, run.run_id);
    expect(finalRun.status).toBe('success');

    // The parent's history: both delegate_task calls answered by the children's final answers, then its own answer.
    const state = await client.threads.getState(thread.thread_id);
    const msgs = (state.values as { messages: Msg[] }).messages;
    const delegated = msgs.filter((m) => m.type === 'tool' && m.name === 'delegate_task');
    expect(delegated.map((m) => m.content)).toEqual(['Wrote outputs/a.txt (alpha).', 'Wrote outputs/b.txt (beta).']);
    expect(delegated.every((m) => m.status === 'success')).toBe(true);
    expect(msgs.filter((m) => m.type === 'tool' && m.name === 'read_file').map((m) => m.content)).toEqual(['alpha', 'beta']);
    expect(msgs.at(-1)).toMatchObject({ type: 'ai', content: 'Both subtasks are done: a.txt says alpha, b.txt says beta.' });

    // The children wrote into the parent's workspace (shared), not their own.
    const outputs = path.join(workspaces, thread.thread_id, 'outputs');
    expect(readFileSync(path.join(outputs, 'a.txt'), 'utf8')).toBe('alpha');
    expect(readFileSync(path.join(outputs, 'b.txt'), 'utf8')).toBe('beta');

    // The children are runs of their own threads, linked to the parent, visible through the API.
    const res = await fetch(`${url}/runs/${run.run_id}/children`);
    const children = (await res.json()) as Array<{ run_id: string; thread_id: string; status: string; metadata: Record<string, unknown> }>;
    expect(children).toHaveLength(2);
    for (const child of children) {
      expect(child).toMatchObject({ status: 'success', metadata: { parent_run_id: run.run_id, parent_thread_id: thread.thread_id } });
      expect(child.thread_id).not.toBe(thread.thread_id);
      const again = await client.runs.get(child.thread_id, child.run_id);
      expect(again.status).toBe('success');
      // Independent context: the child's thread starts with its task, never the parent's history.
      const childState = await client.threads.getState(child.thread_id);
      const childMsgs = (childState.values as { messages: Msg[] }).messages;
      expect(childMsgs[0]).toMatchObject({ type: 'human' });
      expect([TASK_A, TASK_B]).toContain(childMsgs[0]!.content);
      expect(childMsgs.some((m) => m.content.includes('@general'))).toBe(false);
    }
    const links = delegated.map((m) => (m.additional_kwargs?.agentloop_delegated_run as { run_id: string }).run_id);
    expect(links.sort()).toEqual(children.map((c) => c.run_id).sort());

    // The webhook fired once, when the parent really ended.
    await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 300)); // a second delivery would arrive by now
    expect(receiver.deliveries).toHaveLength(1);
    expect(receiver.deliveries[0]!.json).toMatchObject({ run_id: run.run_id, status: 'success' });

    // Worker-slot measurement from the runs handler's log lines.
    const all = lines();
    const jobs = all.filter((l) => l.msg === 'job started' || l.msg === 'job ended');
    const label = (id: string | undefined) =>
      id === run.run_id ? 'parent' : children.findIndex((c) => c.run_id === id) >= 0 ? `child${children.findIndex((c) => c.run_id === id) + 1}` : 'other';
    const ours = jobs.filter((l) => label(l.run_id) !== 'other');
    const trace = ours.map((l) => `${l.msg === 'job started' ? '+' : '-'}${label(l.run_id)}(active=${l.active})`);
    const maxActive = Math.max(...ours.map((l) => l.active ?? 0));
    const suspendedAt = all.findIndex((l) => l.msg === 'run suspended while delegated agents run' && l.run_id === run.run_id);
    const firstChildStart = all.findIndex((l) => l.msg === 'job started' && l.run_id !== run.run_id && label(l.run_id) !== 'other');
    console.log(
      `[delegation e2e, ${mode}] RUN_CONCURRENCY=1; jobs in the worker, in order (from the orchestrator's "job started"/"job ended" log lines): ${trace.join(' ')}; ` +
        `max active jobs = ${maxActive}; the parent logged "run suspended" at line ${suspendedAt}, the first child job started at line ${firstChildStart}`,
    );
    expect(maxActive).toBe(1);
    expect(suspendedAt).toBeGreaterThanOrEqual(0);
    expect(suspendedAt).toBeLessThan(firstChildStart);
    // parent job, both children, then the parent's resume job: four jobs, one at a time.
    expect(trace.map((t) => t.replace(/\(.*\)/, ''))).toEqual([
      '+parent',
      '-parent',
      expect.stringMatching(/^\+child/),
      expect.stringMatching(/^-child/),
      expect.stringMatching(/^\+child/),
      expect.stringMatching(/^-child/),
      '+parent',
      '-parent',
    ]);
  } finally {
    await receiver.close();
  }
}

describe('delegated agents, embedded mode, one worker slot', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let client: Client;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-e2e-delegation-'));
    const logger = createLogger({
      service: 'agentloop',
      level: 'debug',
      destination: {
        write(s: string) {
          for (const l of s.split('\n')) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
        },
      },
    });
    server = await startEmbedded({
      env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, RUN_CONCURRENCY: '1', WEBHOOK_BACKOFF_MS: '50', WEBHOOK_ALLOW: '127.0.0.1' },
      port: 0,
      logger,
    });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs two delegated agents in one step while the parent holds no worker slot, then the parent answers with both results', async () => {
    await twoChildrenScenario('embedded', server.url, path.join(dataDir, 'workspaces', 'default'), () => lines);
  });

  it('tells the parent "Error: delegated task failed" when a child run fails, and the parent goes on', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: '@general try this' }] },
      config: {
        configurable: {
          model: {
            provider: 'scripted',
            turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'fail please' } }] }, { content: 'The subtask failed; I will do it myself.' }],
          },
          // One turn with a tool call and no final turn: the child's second model call fails.
          delegates: { '*': [{ tool_calls: [{ name: 'now', args: {} }] }] },
        },
      },
    })) as { messages: Msg[] };
    const tool = values.messages.find((m) => m.type === 'tool' && m.name === 'delegate_task');
    expect(tool?.status).toBe('error');
    expect(tool?.content).toMatch(/^Error: delegated task failed: Scripted model has no turn #2/);
    expect(values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'The subtask failed; I will do it myself.' });
  });

  it('refuses delegate_task inside a delegated agent (no grandchildren by default) and its invalid arguments, without starting a run', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: '@general nest' }] },
      config: {
        configurable: {
          model: {
            provider: 'scripted',
            turns: [
              {
                tool_calls: [
                  { name: 'delegate_task', args: { task: 'go deeper' } },
                  { name: 'delegate_task', args: { task: 'bad', max_loops: 0 } },
                ],
              },
              { content: 'done' },
            ],
          },
          delegates: {
            'go deeper': {
              model: {
                provider: 'scripted',
                turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'grandchild' } }] }, { content: 'I could not delegate.' }],
              },
              delegates: { '*': [{ content: 'never' }] },
            },
          },
        },
      },
    })) as { messages: Msg[] };
    const tools = values.messages.filter((m) => m.type === 'tool');
    expect(tools.find((m) => m.tool_call_id === 'call_s1_2')?.content).toMatch(
      /^Error: the subtask was not delegated: "max_loops" must be an integer between 1 and 500, got 0/,
    );
    expect(tools.find((m) => m.tool_call_id === 'call_s1_1')?.content).toBe('I could not delegate.');
    const runs = (await (await fetch(`${server.url}/threads/${thread.thread_id}/runs`)).json()) as Array<{ run_id: string }>;
    const children = (await (await fetch(`${server.url}/runs/${runs[0]!.run_id}/children`)).json()) as Array<{ run_id: string; thread_id: string }>;
    expect(children).toHaveLength(1);
    const childState = await client.threads.getState(children[0]!.thread_id);
    const refused = (childState.values as { messages: Msg[] }).messages.find((m) => m.type === 'tool');
    expect(refused?.content).toMatch(/^Error: delegate_task is not available here: delegated agents may be nested at most 1 level/);
    expect(((await (await fetch(`${server.url}/runs/${children[0]!.run_id}/children`)).json()) as unknown[]).length).toBe(0);
  });
});

describe('delegated agents, cluster mode, one worker slot', () => {
  let cluster: ClusterHarness;

  beforeAll(async () => {
    cluster = await startCluster({ orchestrators: 0, env: { WEBHOOK_BACKOFF_MS: '100' } });
    await cluster.startOrchestrator(1, { RUN_CONCURRENCY: '1', LOG_LEVEL: 'debug' });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('runs two delegated agents in one step while the parent holds no worker slot, then the parent answers with both results', async () => {
    // The orchestrator's stdout lines are pino JSON, prefixed "[orchestrator#1] ".
    const lines = () =>
      cluster.linesOf('orchestrator#1').flatMap((l) => {
        try {
          return [JSON.parse(l.slice(l.indexOf('] ') + 2)) as LogLine];
        } catch {
          return [];
        }
      });
    await twoChildrenScenario('cluster', cluster.url, path.join(cluster.workspaceRoot, 'default'), lines);
  });
});
