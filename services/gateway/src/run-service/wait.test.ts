import {
  MemoryRunEventStream,
  createJetStreamRunEventStream,
  connectNatsBus,
  type JetStreamRunEventStream,
  type NatsBus,
  type RunEventStream,
} from '@agentloop/bus';
import { startNats, type DevServer } from '@agentloop/devservers';
import type { JsonObject, RunRecord, RunStatusName } from '@agentloop/store';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { waitForRunEnd } from './wait.js';

let server: DevServer;
let bus: NatsBus;
let jetstream: JetStreamRunEventStream;
beforeAll(async () => {
  server = await startNats({ jetstream: true });
  bus = await connectNatsBus({ url: server.url, name: 'gateway-wait-test' });
  jetstream = await createJetStreamRunEventStream({ bus });
});
afterAll(async () => {
  await jetstream?.close();
  await bus?.close();
  await server?.stop();
});

function run(runId: string, status: RunStatusName, error: string | null = null): RunRecord {
  const now = new Date();
  return {
    runId,
    threadId: 't1',
    tenantId: 'acme',
    assistantId: 'agent',
    status,
    createdAt: now,
    updatedAt: now,
    startedAt: now,
    endedAt: status === 'running' ? null : now,
    attempts: 1,
    error,
    metadata: {},
    kwargs: {},
    multitaskStrategy: 'reject',
    deferred: false,
    deadLetter: null,
    redrives: 0,
  };
}

/**
 * A store whose run record reads `running` until `end()`, its thread's values `{step: 1}` until
 * then and `{done: true}` after; `read` resolves at the first read.
 */
function storeOf(runId: string, ended: RunRecord) {
  let current = run(runId, 'running');
  let values: JsonObject = { step: 1 };
  let firstRead: () => void = () => undefined;
  const read = new Promise<void>((r) => (firstRead = r));
  return {
    read,
    end: () => {
      current = ended;
      values = { done: true };
    },
    getRunWithThreadValues: async (tenantId: string, id: string) => {
      firstRead();
      return tenantId === 'acme' && id === runId ? { run: current, threadValues: values } : undefined;
    },
  };
}

// The same waits over the embedded mode's stream, whose end watch is in-process (memory-events.ts).
const memory = new MemoryRunEventStream();
afterAll(() => memory.close());
const streams: Array<[string, () => RunEventStream]> = [
  ['JetStream', () => jetstream],
  ['the in-process stream', () => memory],
];

describe.each(streams)('waitForRunEnd over %s', (_name, streamOf) => {
  let events: RunEventStream;
  beforeEach(() => {
    events = streamOf();
  });

  it('returns the run and the error event of a run that fails after the wait began', async () => {
    const store = storeOf('run-a', run('run-a', 'error', 'boom'));
    const waiting = waitForRunEnd({ events, store }, 'acme', 'run-a', AbortSignal.timeout(10_000));
    await store.read;
    await events.publish('run-a', 't1', 'error', { error: 'ValueError', message: 'boom' });
    store.end();
    await events.publish('run-a', 't1', 'end', null);
    const r = await waiting;
    expect(r.kind).toBe('finished');
    expect(r.kind === 'finished' && [r.run.status, r.error]).toEqual(['error', { error: 'ValueError', message: 'boom' }]);
  });

  it('finds the error type in the log when the error event came before the wait', async () => {
    const store = storeOf('run-b', run('run-b', 'error', 'boom'));
    await events.publish('run-b', 't1', 'error', { error: 'ValueError', message: 'boom' });
    const waiting = waitForRunEnd({ events, store }, 'acme', 'run-b', AbortSignal.timeout(10_000));
    await store.read;
    store.end();
    await events.publish('run-b', 't1', 'end', null);
    const r = await waiting;
    // The record alone says only "Error": the type comes from the replayed error event.
    expect(r.kind === 'finished' && r.error).toEqual({ error: 'ValueError', message: 'boom' });
  });

  it('returns at once for a run that had already ended, and "missing" for another tenant\'s run', async () => {
    const done = {
      getRunWithThreadValues: async (tenantId: string) => (tenantId === 'acme' ? { run: run('run-c', 'success'), threadValues: { answer: 1 } } : undefined),
    };
    const r = await waitForRunEnd({ events, store: done }, 'acme', 'run-c', AbortSignal.timeout(10_000));
    expect(r.kind === 'finished' && [r.run.status, r.error, r.threadValues]).toEqual(['success', undefined, { answer: 1 }]);
    expect(await waitForRunEnd({ events, store: done }, 'other', 'run-c', AbortSignal.timeout(10_000))).toEqual({ kind: 'missing' });
  });

  it('returns the thread values read with the ended run, not those of before the end', async () => {
    const store = storeOf('run-e', run('run-e', 'success'));
    const waiting = waitForRunEnd({ events, store }, 'acme', 'run-e', AbortSignal.timeout(10_000));
    await store.read;
    store.end();
    await events.publish('run-e', 't1', 'end', null);
    const r = await waiting;
    expect(r.kind === 'finished' && [r.run.status, r.threadValues]).toEqual(['success', { done: true }]);
  });

  it('with a watch live since the run was admitted, reads the run once, after its end', async () => {
    const store = storeOf('run-f', run('run-f', 'success'));
    let reads = 0;
    const counting = { getRunWithThreadValues: (t: string, id: string) => (reads++, store.getRunWithThreadValues(t, id)) };
    const signal = AbortSignal.timeout(10_000);
    const watch = events.watchEnd!('run-f', signal);
    await watch.ready;
    const waiting = waitForRunEnd({ events, store: counting }, 'acme', 'run-f', signal, watch);
    await new Promise((r) => setTimeout(r, 20));
    expect(reads).toBe(0);
    store.end();
    await events.publish('run-f', 't1', 'error', { error: 'ValueError', message: 'late' });
    await events.publish('run-f', 't1', 'end', null);
    const r = await waiting;
    expect(reads).toBe(1);
    expect(r.kind === 'finished' && [r.run.status, r.threadValues, r.error]).toEqual(['success', { done: true }, { error: 'ValueError', message: 'late' }]);
  });

  it('with a watch live since the run was admitted, returns "missing" for a run gone at its end', async () => {
    const gone = { getRunWithThreadValues: async () => undefined };
    const signal = AbortSignal.timeout(10_000);
    const watch = events.watchEnd!('run-g', signal);
    await watch.ready;
    const waiting = waitForRunEnd({ events, store: gone }, 'acme', 'run-g', signal, watch);
    await events.publish('run-g', 't1', 'end', null);
    expect(await waiting).toEqual({ kind: 'missing' });
  });

  it('returns "aborted" when the caller gives up before the end', async () => {
    const store = storeOf('run-d', run('run-d', 'success'));
    const ac = new AbortController();
    const waiting = waitForRunEnd({ events, store }, 'acme', 'run-d', ac.signal);
    await store.read;
    ac.abort();
    expect(await waiting).toEqual({ kind: 'aborted' });
  });

  it('keeps waiting through a database outage: reads that find it down are tried again (a join spanning a MariaDB restart)', async () => {
    const store = storeOf('run-f', run('run-f', 'success'));
    let down = false;
    let failedReads = 0;
    const flaky = {
      getRunWithThreadValues: async (tenantId: string, id: string) => {
        if (down) {
          failedReads++;
          if (failedReads === 3) down = false; // the database is back
          throw Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true });
        }
        return store.getRunWithThreadValues(tenantId, id);
      },
    };
    const waiting = waitForRunEnd({ events, store: flaky }, 'acme', 'run-f', AbortSignal.timeout(10_000));
    await store.read;
    down = true;
    store.end();
    await events.publish('run-f', 't1', 'end', null);
    const r = await waiting;
    expect(failedReads).toBe(3);
    expect(r.kind === 'finished' && [r.run.status, r.threadValues]).toEqual(['success', { done: true }]);
  });

  it("ends with the outage's error when the wait's signal ends during a database outage, and fails at once on any other error", async () => {
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
    const ac = new AbortController();
    let reads = 0;
    const down = {
      getRunWithThreadValues: async () => {
        if (++reads === 2) ac.abort();
        throw outage;
      },
    };
    await expect(waitForRunEnd({ events, store: down }, 'acme', 'run-g', ac.signal)).rejects.toBe(outage);
    expect(reads).toBe(2);

    const broken = new Error('Unknown column');
    let brokenReads = 0;
    const wrong = {
      getRunWithThreadValues: async () => {
        brokenReads++;
        throw broken;
      },
    };
    await expect(waitForRunEnd({ events, store: wrong }, 'acme', 'run-h', AbortSignal.timeout(10_000))).rejects.toBe(broken);
    expect(brokenReads).toBe(1);
  });
});
