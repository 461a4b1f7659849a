import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Client } from '@langchain/langgraph-sdk';
import { startMariaDb, startNats, startRedis, type DevServer } from '@agentloop/devservers';
import { connectNatsBus, createJetStreamRunEventStream, type JetStreamRunEventStream, type NatsBus } from '@agentloop/bus';
import { createBullMqQueue, type BullMqQueue } from '@agentloop/queue';
import { createMysqlStore, type Store } from '@agentloop/store';
import { newId, silentLogger } from '@agentloop/core';
import { createGatewayApp } from './app.js';
import { loadGatewayConfig } from './config.js';
import { startFakeOrchestrator, type FakeOrchestrator } from './testing/index.js';

// The gateway on the cluster adapters: MariaDB records, BullMQ on Redis, JetStream run events.
let nats: DevServer;
let redis: DevServer;
let maria: DevServer;
let bus: NatsBus;
let events: JetStreamRunEventStream;
let store: Store;
let runs: BullMqQueue;
let webhooks: BullMqQueue;
let orchestrator: FakeOrchestrator;
let app: FastifyInstance;
let client: Client;

beforeAll(async () => {
  [nats, redis, maria] = await Promise.all([startNats({ jetstream: true }), startRedis(), startMariaDb()]);
  const logger = silentLogger();
  bus = await connectNatsBus({ url: nats.url, name: 'gateway-test', logger });
  events = await createJetStreamRunEventStream({ bus, logger });
  store = createMysqlStore({ url: maria.url });
  await store.migrate();
  const prefix = `gw-${newId().slice(0, 8)}`;
  runs = createBullMqQueue({ name: 'runs', redisUrl: redis.url, prefix, logger });
  webhooks = createBullMqQueue({ name: 'webhooks', redisUrl: redis.url, prefix, logger });
  orchestrator = await startFakeOrchestrator({ runs, store, events, webhooks });
  app = await createGatewayApp({ store, runs, events, logger, config: loadGatewayConfig({ AGENTLOOP_API_KEYS: 'k:acme' }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  client = new Client({ apiUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, apiKey: 'k' });
});

afterAll(async () => {
  await app?.close();
  await orchestrator?.close();
  await Promise.allSettled([runs?.close(), webhooks?.close(), events?.close(), store?.close()]);
  await bus?.close();
  await Promise.allSettled([nats?.stop(), redis?.stop(), maria?.stop()]);
});

type Msg = { content: string };
const input = (text: string) => ({ messages: [{ role: 'user', content: text }] });

describe('gateway on NATS JetStream, BullMQ and MariaDB', () => {
  it('runs.wait returns the final values', async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', { input: input('cluster') })) as { messages: Msg[] };
    expect(values.messages.map((m) => m.content)).toEqual(['cluster', 'echo: cluster']);
  });

  it('runs.stream delivers metadata, values and end', async () => {
    const thread = await client.threads.create();
    const events: string[] = [];
    for await (const part of client.runs.stream(thread.thread_id, 'agent', { input: input('s'), streamMode: 'values' })) events.push(part.event);
    expect(events).toEqual(['metadata', 'values', 'values', 'end']);
  });

  it('runs.joinStream resumes after a Last-Event-ID', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', { input: input('j'), streamMode: ['values', 'updates'] });
    await client.runs.join(thread.thread_id, run.run_id);
    const all: { event: string; id?: string | undefined }[] = [];
    for await (const p of client.runs.joinStream(thread.thread_id, run.run_id)) all.push({ event: p.event, id: p.id });
    const rest: string[] = [];
    for await (const p of client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: all[0]!.id! })) rest.push(p.event);
    expect(all.map((e) => e.event)).toEqual(['values', 'updates', 'values', 'end']);
    expect(rest).toEqual(['updates', 'values', 'end']);
  });

  it('stateless runs.wait cleans up its thread in MariaDB', async () => {
    const values = (await client.runs.wait(null, 'agent', { input: input('tmp') })) as { messages: Msg[] };
    const job = orchestrator.jobs.at(-1)!;
    expect(values.messages.at(-1)?.content).toBe('echo: tmp');
    expect(await store.getThread('acme', job.threadId)).toBeUndefined();
  });
});
