/**
 * In-flight capacity (issue 9; services/orchestrator/src/step-gate.ts): a run waiting on its model
 * holds no CPU slot of the worker. With a single slot (RUN_STEP_CONCURRENCY=1), many runs whose
 * model takes seconds are all in flight at once — each `running`, each waiting on its model — and
 * all end; before the gate, the slot was held for the whole run, so they ran one after another.
 * Embedded and as a cluster (BullMQ worker with the default RUN_CONCURRENCY).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { poll, scripted, startCluster, type ClusterHarness, useEmbeddedServer } from './helpers.js';

const RUNS = 12;
/** Long enough that every run is still waiting on its model when the last one is taken. */
const MODEL_DELAY_MS = 8_000;

async function allWaitingOnTheModelAtOnce(baseUrl: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const runs = await Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: `run ${i}` }] },
        config: scripted([{ tool_calls: [{ name: 'now', args: {} }] }, { content: `answer ${i}`, delay_ms: MODEL_DELAY_MS }]),
      });
      return { thread: thread.thread_id, run: run.run_id };
    }),
  );
  const statuses = async () => Promise.all(runs.map(async (r) => (await client.runs.get(r.thread, r.run)).status));
  // Every run running at the same moment: none finished (the model takes seconds), none queued.
  const seen = await poll(
    async () => {
      const s = await statuses();
      if (s.some((x) => x !== 'pending' && x !== 'running')) return s;
      return s.every((x) => x === 'running') ? s : undefined;
    },
    60_000,
    100,
  );
  expect(seen).toEqual(Array(RUNS).fill('running'));
  for (const r of runs) await client.runs.join(r.thread, r.run);
  expect(await statuses()).toEqual(Array(RUNS).fill('success'));
  for (const [i, r] of runs.entries()) {
    const state = (await client.threads.getState(r.thread)) as { values: { messages: Array<{ content: string }> } };
    expect(state.values.messages.at(-1)!.content).toBe(`answer ${i}`);
  }
}

describe('in-flight capacity (embedded, one CPU slot)', () => {
  const server = useEmbeddedServer('agentloop-capacity-', { RUN_STEP_CONCURRENCY: '1' });

  it(`holds ${RUNS} runs waiting on their model at once and ends them all`, async () => {
    await allWaitingOnTheModelAtOnce(server.url);
  }, 120_000);
});

describe('in-flight capacity (cluster, one CPU slot per orchestrator)', () => {
  let cluster: ClusterHarness;
  beforeAll(async () => {
    cluster = await startCluster({ env: { RUN_STEP_CONCURRENCY: '1' } });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it(`holds ${RUNS} runs waiting on their model at once and ends them all`, async () => {
    await allWaitingOnTheModelAtOnce(cluster.url);
  }, 120_000);
});
