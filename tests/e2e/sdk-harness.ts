/**
 * Shared pieces of the SDK acceptance tests (issue 11): one AgentLoop per mode and test file
 * (embedded, or a cluster of processes over NATS, Redis and MariaDB), reached through the official
 * `@langchain/langgraph-sdk` client, and small helpers to drain streams and wait for run states.
 */
import { afterAll, beforeAll } from 'vitest';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { poll, startCluster, useEmbeddedServer, type ClusterHarness } from './helpers.js';

export type Mode = 'embedded' | 'cluster';
export const MODES: readonly Mode[] = ['embedded', 'cluster'];

/** The built-in assistant of the `agent` graph (uuid5 of the graph id, as LangGraph derives it). */
export const DEFAULT_ASSISTANT_ID = 'fe096781-5601-53d2-b2f6-0d3403f7e9ca';

export interface Target {
  readonly url: string;
  readonly client: Client;
  /** Where the per-tenant workspaces live (`<root>/default/<thread_id>`). */
  readonly workspaceRoot: string;
}

/**
 * Registers beforeAll/afterAll that start AgentLoop in `mode` (with `env` added) and stop it;
 * the returned target's getters read it once started.
 */
export function useTarget(mode: Mode, prefix: string, env: NodeJS.ProcessEnv = {}): Target {
  if (mode === 'embedded') {
    const server = useEmbeddedServer(prefix, env);
    let client: Client | undefined;
    return {
      get url() {
        return server.url;
      },
      get client() {
        client ??= new Client({ apiUrl: server.url });
        return client;
      },
      get workspaceRoot() {
        return path.join(server.dataDir, 'workspaces');
      },
    };
  }
  let cluster: ClusterHarness | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    cluster = await startCluster({ env });
    client = new Client({ apiUrl: cluster.url });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const started = (): ClusterHarness => {
    if (!cluster) throw new Error('the cluster is not started (use it inside a test)');
    return cluster;
  };
  return {
    get url() {
      return started().url;
    },
    get client() {
      started();
      return client!;
    },
    get workspaceRoot() {
      return started().workspaceRoot;
    },
  };
}

export type StreamEvent = { event: string; data: unknown; id?: string };

/** Drains an SDK stream; every event in order. */
export async function collect(stream: AsyncIterable<{ event: string; data: unknown; id?: string }>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push({ event: e.event, data: e.data, ...(e.id !== undefined ? { id: e.id } : {}) });
  return events;
}

/** The data of every event named `name` (an exact name, or a prefix ending in '|'). */
export function dataOf<T = unknown>(events: readonly StreamEvent[], name: string): T[] {
  const matches = name.endsWith('|')
    ? (e: StreamEvent) => e.event === name.slice(0, -1) || e.event.startsWith(`${name.slice(0, -1)}|`)
    : (e: StreamEvent) => e.event === name;
  return events.filter(matches).map((e) => e.data as T);
}

/** A user message input. */
export const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** Waits until the run has status `status` (or one of them). */
export async function waitRunStatus(client: Client, threadId: string, runId: string, status: string | readonly string[], timeoutMs = 60_000): Promise<void> {
  const wanted = typeof status === 'string' ? [status] : status;
  await poll(async () => (wanted.includes((await client.runs.get(threadId, runId)).status) ? true : undefined), timeoutMs, 50);
}

/** Waits until the thread has status `status`. */
export async function waitThreadStatus(client: Client, threadId: string, status: string, timeoutMs = 60_000): Promise<void> {
  await poll(async () => ((await client.threads.get(threadId)).status === status ? true : undefined), timeoutMs, 50);
}

/** The HTTP status of an SDK call that is expected to fail (the SDK's error carries `status`). */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number') return status;
    throw err;
  }
  throw new Error('expected the call to fail, it succeeded');
}
