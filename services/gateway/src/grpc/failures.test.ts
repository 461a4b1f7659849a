/**
 * Every failing path of every RPC ends the call with a status, for a client that sets no deadline
 * (a call that never ends would hang it forever: each test has its own short timeout), and every
 * id is validated as the HTTP paths validate it, before any store or workspace work.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { MAX_JSON_DEPTH } from '@agentloop/core';
import type { RunStreamEvent } from '@agentloop/proto';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../testing/index.js';
import { AGENTLOOP_GRPC_DEFINITION, createAgentLoopGrpcClient, startGrpcServer, type AgentLoopClient, type GrpcServer } from './index.js';

let gw: TestGateway | undefined;
let server: GrpcServer | undefined;
const clients: AgentLoopClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.close();
  await gw?.close();
  gw = undefined;
  server = undefined;
});

/** A client of the test gateway's gRPC server that sets no deadline on its calls. */
async function setup(opts: TestGatewayOptions = {}): Promise<void> {
  gw = await startTestGateway(opts);
  server = await startGrpcServer({ context: gw.app.agentloop, host: '127.0.0.1', port: 0 });
}
function client(apiKey?: string): AgentLoopClient {
  const c = createAgentLoopGrpcClient(`127.0.0.1:${server!.port}`, apiKey === undefined ? {} : { apiKey });
  clients.push(c);
  return c;
}

/** Resolves with the status a call ended with; fails if it succeeded. */
async function failure(p: Promise<unknown>): Promise<grpc.ServiceError> {
  return p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: grpc.ServiceError) => err,
  );
}
/** Reads a server stream to its end (its status is the promise's outcome). */
async function drain(stream: AsyncIterable<RunStreamEvent>): Promise<RunStreamEvent[]> {
  const out: RunStreamEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

const say = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }] });
const UNKNOWN = '6d1f3c0e-1111-4222-8333-444455556666';
const KEYS = { AGENTLOOP_API_KEYS: 'key-a:acme,key-b:globex' };
/** Short enough that a hung call fails the test, long enough for a loaded CI machine. */
const HANG_MS = 15_000;

describe('gRPC failure paths end with a status, without a client deadline', () => {
  it(
    'StreamRun and JoinRunStream: unknown run, unknown thread, another tenant’s run',
    async () => {
      await setup({ env: KEYS });
      const a = client('key-a');
      const b = client('key-b');
      const t = await a.createThread({});
      const done = await a.waitRun({ threadId: t.threadId, inputJson: say('mine') });
      const runId = done.run!.runId;

      const unknownRun = await failure(drain(a.joinRunStream({ threadId: t.threadId, runId: UNKNOWN })));
      expect(unknownRun.code).toBe(grpc.status.NOT_FOUND);
      expect(unknownRun.details).toBe(`Run ${UNKNOWN} not found on thread ${t.threadId}.`);
      expect((await failure(drain(a.joinRunStream({ threadId: UNKNOWN, runId })))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(drain(a.streamRun({ threadId: UNKNOWN, inputJson: say('x') })))).code).toBe(grpc.status.NOT_FOUND);

      const foreignJoin = await failure(drain(b.joinRunStream({ threadId: t.threadId, runId })));
      expect(foreignJoin.code).toBe(grpc.status.NOT_FOUND);
      expect(foreignJoin.details).toBe(unknownRun.details.replace(UNKNOWN, runId));
      const foreignStream = await failure(drain(b.streamRun({ threadId: t.threadId, inputJson: say('intrude') })));
      expect(foreignStream.code).toBe(grpc.status.NOT_FOUND);
      expect(await gw!.store.listRuns('acme', t.threadId, { limit: 10, offset: 0 })).toHaveLength(1);
    },
    HANG_MS,
  );

  it(
    'every RPC answers UNAUTHENTICATED without a key and with an unknown key, streams included',
    async () => {
      await setup({ env: KEYS });
      const a = client('key-a');
      const t = await a.createThread({});
      const run = (await a.waitRun({ threadId: t.threadId, inputJson: say('x') })).run!;
      for (const c of [client(), client('not-a-key')]) {
        const threadId = t.threadId;
        const runId = run.runId;
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['createThread', () => c.createThread({})],
          ['getThread', () => c.getThread({ threadId })],
          ['deleteThread', () => c.deleteThread({ threadId })],
          ['getThreadState', () => c.getThreadState({ threadId })],
          ['createRun', () => c.createRun({ threadId, inputJson: say('x') })],
          ['waitRun', () => c.waitRun({ threadId, inputJson: say('x') })],
          ['getRun', () => c.getRun({ threadId, runId })],
          ['listRuns', () => c.listRuns({ threadId })],
          ['cancelRun', () => c.cancelRun({ threadId, runId })],
          ['streamRun', () => drain(c.streamRun({ threadId, inputJson: say('x') }))],
          ['joinRunStream', () => drain(c.joinRunStream({ threadId, runId }))],
        ];
        for (const [name, call] of calls) {
          const err = await failure(call());
          expect({ name, code: grpc.status[err.code] }).toEqual({ name, code: 'UNAUTHENTICATED' });
        }
      }
      expect(await gw!.store.listRuns('acme', t.threadId, { limit: 10, offset: 0 })).toHaveLength(1);
    },
    HANG_MS,
  );
});

describe('gRPC requests that do not decode', () => {
  it(
    'a request that is not a valid message ends unary and streaming calls with a status',
    async () => {
      await setup();
      const c = client();
      const garbage = () => Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
      const defs = AGENTLOOP_GRPC_DEFINITION;
      const unary = await new Promise<grpc.ServiceError | null>((resolve) => {
        c.raw.makeUnaryRequest(defs.getRun!.path, garbage, defs.getRun!.responseDeserialize, {}, new grpc.Metadata(), {}, (err) => resolve(err));
      });
      // grpc-js answers before any handler runs: INTERNAL "Error deserializing request".
      expect(unary?.code).toBe(grpc.status.INTERNAL);
      expect(unary?.details).toBe('Error deserializing request');
      const stream = c.raw.makeServerStreamRequest(defs.joinRunStream!.path, garbage, defs.joinRunStream!.responseDeserialize, {}, new grpc.Metadata(), {});
      const streamed = await new Promise<grpc.ServiceError>((resolve) => {
        stream.on('data', () => undefined);
        stream.on('error', resolve);
      });
      expect(streamed.code).toBe(grpc.status.INTERNAL);
      // The server is fine afterwards.
      expect((await c.createThread({})).threadId).toMatch(/^[0-9a-f-]{36}$/);
    },
    HANG_MS,
  );
});

describe('gRPC ids are validated as HTTP validates them, before any store or workspace work', () => {
  const BAD_IDS = ['../../x', '..', 'not-a-uuid', `${UNKNOWN}/../x`, ' ', 'x'.repeat(10_000)];

  it(
    'a thread id that is not a UUID is INVALID_ARGUMENT naming thread_id, for every RPC taking one',
    async () => {
      await setup();
      const c = client();
      const runId = UNKNOWN;
      const beside = await readdir(path.dirname(gw!.config.WORKSPACE_ROOT));
      for (const threadId of BAD_IDS) {
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['createThread', () => c.createThread({ threadId })],
          ['getThread', () => c.getThread({ threadId })],
          ['deleteThread', () => c.deleteThread({ threadId })],
          ['getThreadState', () => c.getThreadState({ threadId })],
          ['createRun', () => c.createRun({ threadId, inputJson: say('x') })],
          ['createRun if_not_exists', () => c.createRun({ threadId, inputJson: say('x'), ifNotExistsCreate: true })],
          ['waitRun', () => c.waitRun({ threadId, inputJson: say('x'), ifNotExistsCreate: true })],
          ['streamRun', () => drain(c.streamRun({ threadId, inputJson: say('x'), ifNotExistsCreate: true }))],
          ['joinRunStream', () => drain(c.joinRunStream({ threadId, runId }))],
          ['getRun', () => c.getRun({ threadId, runId })],
          ['listRuns', () => c.listRuns({ threadId })],
          ['cancelRun', () => c.cancelRun({ threadId, runId })],
        ];
        for (const [name, call] of calls) {
          const err = await failure(call());
          expect({ name, code: grpc.status[err.code], details: err.details }).toEqual({
            name,
            code: 'INVALID_ARGUMENT',
            details: 'Invalid request: thread_id: expected a UUID',
          });
        }
      }
      // Nothing was created: no thread, no run, no workspace folder (in or beside the root).
      expect(await gw!.store.searchThreads('default', { limit: 10, offset: 0 })).toEqual([]);
      expect(gw!.orchestrator!.jobs).toEqual([]);
      expect(await readdir(gw!.config.WORKSPACE_ROOT)).toEqual([]);
      expect((await readdir(path.dirname(gw!.config.WORKSPACE_ROOT))).filter((n) => n === 'x' && !beside.includes(n))).toEqual([]);
    },
    HANG_MS,
  );

  it(
    'a run id that is not a UUID is INVALID_ARGUMENT naming run_id, the same text HTTP gives',
    async () => {
      await setup();
      const c = client();
      const t = await c.createThread({});
      for (const runId of BAD_IDS) {
        for (const call of [
          () => c.getRun({ threadId: t.threadId, runId }),
          () => c.cancelRun({ threadId: t.threadId, runId }),
          () => drain(c.joinRunStream({ threadId: t.threadId, runId })),
        ]) {
          const err = await failure(call());
          expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
          expect(err.details).toBe('Invalid request: run_id: expected a UUID');
        }
      }
      // HTTP's answer for the same id, field named as in the path.
      const http = await gw!.app.inject({ method: 'GET', url: `/threads/${t.threadId}/runs/not-a-uuid` });
      expect(http.statusCode).toBe(422);
      expect((http.json() as { detail: string }).detail).toBe('Invalid request: params.run_id: expected a UUID');
    },
    HANG_MS,
  );

  it(
    'an empty id says it is required',
    async () => {
      await setup();
      const c = client();
      expect((await failure(c.getThread({ threadId: '' }))).details).toBe('Invalid request: thread_id: is required (a UUID)');
      const t = await c.createThread({});
      expect((await failure(drain(c.joinRunStream({ threadId: t.threadId, runId: '' })))).details).toBe('Invalid request: run_id: is required (a UUID)');
    },
    HANG_MS,
  );
});

describe('gRPC *_json fields are depth-limited', () => {
  const deep = (n: number) => `{"messages":${'['.repeat(n)}${']'.repeat(n)}}`;

  it(
    'JSON nested 10,000 deep is INVALID_ARGUMENT naming the field and the limit, and the server keeps serving',
    async () => {
      await setup();
      const c = client();
      const t = await c.createThread({});
      for (const [field, req] of [
        ['input_json', { threadId: t.threadId, inputJson: deep(10_000) }],
        ['config_json', { threadId: t.threadId, inputJson: say('x'), configJson: deep(10_000) }],
        ['metadata_json', { threadId: t.threadId, inputJson: say('x'), metadataJson: deep(10_000) }],
        ['command_json', { threadId: t.threadId, commandJson: deep(10_000) }],
      ] as const) {
        for (const call of [() => c.createRun(req), () => c.waitRun(req), () => drain(c.streamRun(req))]) {
          const err = await failure(call());
          expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
          expect(err.details).toContain(field);
          expect(err.details).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
        }
      }
      const thread = await failure(c.createThread({ metadataJson: deep(10_000) }));
      expect(thread.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(thread.details).toContain('metadata_json');
      expect(await gw!.store.listRuns('default', t.threadId, { limit: 10, offset: 0 })).toEqual([]);
      // Within the limit is fine.
      const ok = await c.waitRun({ threadId: t.threadId, inputJson: say('still here'), metadataJson: `{"a":${deep(MAX_JSON_DEPTH - 2)}}` });
      expect(ok.run?.status).toBe('success');
    },
    HANG_MS,
  );
});

describe('gRPC error text never carries host paths', () => {
  it(
    'a run failure naming a workspace path reaches WaitRun and StreamRun redacted',
    async () => {
      await setup({
        orchestrator: {
          reply: () => {
            throw new Error(`ENOENT: no such file or directory, open '${gw!.config.WORKSPACE_ROOT}/default/t1/uploads/a.csv'`);
          },
        },
      });
      const c = client();
      const waited = await c.waitRun({ inputJson: say('x') });
      expect(JSON.parse(waited.errorJson)).toEqual({
        error: 'Error',
        message: "ENOENT: no such file or directory, open '<workspace-root>/default/t1/uploads/a.csv'",
      });
      const events = await drain(c.streamRun({ inputJson: say('y') }));
      const error = events.find((e) => e.event === 'error');
      expect(error?.dataJson).not.toContain(gw!.config.WORKSPACE_ROOT);
      expect(JSON.parse(error!.dataJson)).toMatchObject({ message: expect.stringContaining('<workspace-root>/default/t1/uploads/a.csv') as unknown as string });
    },
    HANG_MS,
  );
});
