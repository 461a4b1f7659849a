import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from 'mysql2/promise';
import { emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata, type CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { MySQLSaver } from './saver.js';

let server: DevServer;
let n = 0;

async function admin(sqlText: string): Promise<unknown[]> {
  const conn = await createConnection(server.url);
  try {
    const [rows] = await conn.query(sqlText);
    return rows as unknown[];
  } finally {
    await conn.end();
  }
}

/** A URL to a new, empty database on the shared server. */
async function freshDatabaseUrl(): Promise<string> {
  const name = `ckpt_${process.pid}_${n++}`;
  await admin(`CREATE DATABASE \`${name}\``);
  return server.url.replace(/\/agentloop$/, `/${name}`);
}

function checkpoint(channelValues: Record<string, unknown> = {}, version = 1): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: channelValues,
    channel_versions: Object.fromEntries(Object.keys(channelValues).map((k) => [k, version])),
    versions_seen: { agent: { messages: 1 } },
  };
}
const meta = (step: number, source: CheckpointMetadata['source'] = 'loop'): CheckpointMetadata => ({ source, step, parents: {} });

async function all(gen: AsyncGenerator<CheckpointTuple>): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of gen) out.push(t);
  return out;
}

beforeAll(async () => {
  server = await startMariaDb();
});
afterAll(async () => {
  await server?.stop();
});

describe('MySQLSaver.setup', () => {
  it('creates the schema once when three savers set up a fresh database concurrently, and again is a no-op', async () => {
    const url = await freshDatabaseUrl();
    const savers = [MySQLSaver.fromConnString(url), MySQLSaver.fromConnString(url), MySQLSaver.fromConnString(url)];
    try {
      await Promise.all(savers.map((s) => s.setup()));
      await savers[0]!.setup();
      const db = new URL(url).pathname.slice(1);
      const versions = await admin(`SELECT v FROM \`${db}\`.checkpoint_migrations ORDER BY v`);
      expect(versions).toEqual([{ v: 0 }, { v: 1 }, { v: 2 }, { v: 3 }]);
    } finally {
      await Promise.all(savers.map((s) => s.end()));
    }
  });

  it('puts its tables in the given schema with the given prefix', async () => {
    const saver = MySQLSaver.fromConnString(server.url, { schema: `ckpt_schema_${process.pid}`, tablePrefix: 'lg_' });
    try {
      await saver.setup();
      const rows = await admin(`SHOW TABLES FROM \`ckpt_schema_${process.pid}\``);
      expect(rows.map((r) => Object.values(r as object)[0]).sort()).toEqual([
        'lg_checkpoint_blobs',
        'lg_checkpoint_migrations',
        'lg_checkpoint_writes',
        'lg_checkpoints',
      ]);
    } finally {
      await saver.end();
    }
  });
});

describe('MySQLSaver', () => {
  let saver: MySQLSaver;
  beforeAll(async () => {
    saver = MySQLSaver.fromConnString(await freshDatabaseUrl());
    await saver.setup();
  });
  afterAll(async () => {
    await saver?.end();
  });

  it('getTuple returns what put stored, with config and parent config', async () => {
    const thread_id = 'round-trip';
    const values = { messages: [{ role: 'user', content: 'héllo 😀' }], count: 3, nothing: null, bytes: new Uint8Array([0, 1, 255]) };
    const parent = checkpoint({ count: 1 });
    const parentConfig = await saver.put({ configurable: { thread_id } }, parent, meta(-1, 'input'), { count: 1 });
    const child = checkpoint(values, 2);
    const childConfig = await saver.put(parentConfig, child, meta(0), child.channel_versions);

    expect(childConfig).toEqual({ configurable: { thread_id, checkpoint_ns: '', checkpoint_id: child.id } });
    const tuple = await saver.getTuple(childConfig);
    expect(tuple?.checkpoint).toEqual(child);
    expect(tuple?.metadata).toEqual(meta(0));
    expect(tuple?.config).toEqual(childConfig);
    expect(tuple?.parentConfig).toEqual({ configurable: { thread_id, checkpoint_ns: '', checkpoint_id: parent.id } });
    expect(tuple?.pendingWrites).toEqual([]);
    // Without a checkpoint id: the latest one.
    expect((await saver.getTuple({ configurable: { thread_id } }))?.checkpoint.id).toBe(child.id);
    expect(await saver.getTuple({ configurable: { thread_id: 'no-such-thread' } })).toBeUndefined();
  });

  it('stores a channel value only for the channels in newVersions', async () => {
    const thread_id = 'deltas';
    const cp = checkpoint({ a: 'A', b: 'B' });
    const config = await saver.put({ configurable: { thread_id } }, cp, meta(0), { a: 1 });
    expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ a: 'A' });
  });

  it('two branches forked from one checkpoint keep their own channel values (versions are unique per write)', async () => {
    const thread_id = 'fork';
    const parentConfig = await saver.put({ configurable: { thread_id } }, checkpoint({ x: 'root' }), meta(0), { x: 1 });
    const branch = async (value: string) => {
      const v = saver.getNextVersion(1);
      expect(Math.floor(v)).toBe(2);
      const cp = { ...checkpoint({ x: value }), channel_versions: { x: v } };
      return saver.put(parentConfig, cp, meta(1), { x: v });
    };
    const a = await branch('old branch');
    const b = await branch('new branch');
    expect((await saver.getTuple(a))?.checkpoint.channel_values).toEqual({ x: 'old branch' });
    expect((await saver.getTuple(b))?.checkpoint.channel_values).toEqual({ x: 'new branch' });
    // Increasing, and past the integer versions of older checkpoints.
    expect(saver.getNextVersion(undefined)).toBeGreaterThanOrEqual(1);
    expect(saver.getNextVersion(2.7)).toBeGreaterThan(3 - 1e-9);
  });

  it('list returns checkpoints newest first, honouring limit and before', async () => {
    const thread_id = 'listing';
    const ids: string[] = [];
    let config = { configurable: { thread_id } } as { configurable: Record<string, unknown> };
    for (let step = 0; step < 4; step++) {
      const cp = checkpoint({ step });
      ids.push(cp.id);
      config = (await saver.put(config, cp, meta(step), { step: 1 })) as typeof config;
    }
    const listed = await all(saver.list({ configurable: { thread_id } }));
    expect(listed.map((t) => t.checkpoint.id)).toEqual([...ids].reverse());
    expect((await all(saver.list({ configurable: { thread_id } }, { limit: 2 }))).map((t) => t.checkpoint.id)).toEqual([ids[3], ids[2]]);
    const before = { configurable: { thread_id, checkpoint_id: ids[2] } };
    expect((await all(saver.list({ configurable: { thread_id } }, { before }))).map((t) => t.checkpoint.id)).toEqual([ids[1], ids[0]]);
    expect((await all(saver.list({ configurable: { thread_id } }, { filter: { step: 2 } }))).map((t) => t.checkpoint.id)).toEqual([ids[2]]);
    expect(await all(saver.list({ configurable: { thread_id } }, { filter: { source: 'input' } }))).toEqual([]);
  });

  it('putWrites come back as pendingWrites ordered by task path, task id and index', async () => {
    const thread_id = 'writes';
    const config = await saver.put({ configurable: { thread_id } }, checkpoint(), meta(0), {});
    await saver.putWrites(
      config,
      [
        ['x', 'from-b-0'],
        ['y', { n: 1 }],
      ],
      'task-b',
      '~1',
    );
    await saver.putWrites(config, [['x', 'from-a']], 'task-a', '~2');
    await saver.putWrites(config, [['x', 'input']], 'task-z');
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toEqual([
      ['task-z', 'x', 'input'],
      ['task-b', 'x', 'from-b-0'],
      ['task-b', 'y', { n: 1 }],
      ['task-a', 'x', 'from-a'],
    ]);
  });

  it('keeps the first regular write of a retried task but replaces special writes', async () => {
    const thread_id = 'retried';
    const config = await saver.put({ configurable: { thread_id } }, checkpoint(), meta(0), {});
    await saver.putWrites(config, [['x', 'first']], 't1');
    await saver.putWrites(config, [['x', 'second']], 't1');
    await saver.putWrites(config, [['__error__', 'boom 1']], 't2');
    await saver.putWrites(config, [['__error__', 'boom 2']], 't2');
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([
      ['t1', 'x', 'first'],
      ['t2', '__error__', 'boom 2'],
    ]);
  });

  it('applies both rules when one putWrites call mixes regular and special writes', async () => {
    const thread_id = 'mixed';
    const config = await saver.put({ configurable: { thread_id } }, checkpoint(), meta(0), {});
    await saver.putWrites(
      config,
      [
        ['x', 'first'],
        ['__interrupt__', 'ask 1'],
      ],
      't1',
    );
    await saver.putWrites(
      config,
      [
        ['x', 'second'],
        ['__interrupt__', 'ask 2'],
      ],
      't1',
    );
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([
      ['t1', '__interrupt__', 'ask 2'],
      ['t1', 'x', 'first'],
    ]);
  });

  it('stores a channel value of 64 KiB byte for byte', async () => {
    const thread_id = 'large';
    const big = 'é'.repeat(32 * 1024) + '\u0000\\\'"';
    const config = await saver.put({ configurable: { thread_id } }, checkpoint({ messages: [big] }), meta(0), { messages: 1 });
    expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ messages: [big] });
  });

  it('keeps checkpoint namespaces apart', async () => {
    const thread_id = 'namespaces';
    const root = checkpoint({ v: 'root' });
    const sub = checkpoint({ v: 'sub' });
    await saver.put({ configurable: { thread_id, checkpoint_ns: '' } }, root, meta(0), { v: 1 });
    const subConfig = await saver.put({ configurable: { thread_id, checkpoint_ns: 'tools:1' } }, sub, meta(0), { v: 1 });
    await saver.putWrites(subConfig, [['v', 'w']], 'sub-task');
    const rootTuple = await saver.getTuple({ configurable: { thread_id } });
    expect(rootTuple?.checkpoint).toEqual(root);
    expect(rootTuple?.pendingWrites).toEqual([]);
    expect((await saver.getTuple({ configurable: { thread_id, checkpoint_ns: 'tools:1' } }))?.checkpoint).toEqual(sub);
    expect((await all(saver.list({ configurable: { thread_id, checkpoint_ns: '' } }))).map((t) => t.checkpoint.id)).toEqual([root.id]);
    expect((await all(saver.list({ configurable: { thread_id } }))).map((t) => t.checkpoint.id).sort()).toEqual([root.id, sub.id].sort());
  });

  it('thread ids differing only in case or trailing space are different threads', async () => {
    await saver.put({ configurable: { thread_id: 'Case' } }, checkpoint(), meta(0), {});
    expect(await saver.getTuple({ configurable: { thread_id: 'case' } })).toBeUndefined();
    expect(await saver.getTuple({ configurable: { thread_id: 'Case ' } })).toBeUndefined();
  });

  it('deleteThread removes the thread’s checkpoints, values and writes, and nothing else', async () => {
    const keep = await saver.put({ configurable: { thread_id: 'keep-me' } }, checkpoint({ a: 1 }), meta(0), { a: 1 });
    const gone = await saver.put({ configurable: { thread_id: 'delete-me' } }, checkpoint({ a: 1 }), meta(0), { a: 1 });
    await saver.putWrites(gone, [['a', 2]], 't');
    await saver.deleteThread('delete-me');
    expect(await saver.getTuple({ configurable: { thread_id: 'delete-me' } })).toBeUndefined();
    expect(await all(saver.list({ configurable: { thread_id: 'delete-me' } }))).toEqual([]);
    expect((await saver.getTuple(keep))?.checkpoint.channel_values).toEqual({ a: 1 });
  });

  it('refuses a put without thread_id and putWrites without checkpoint_id', async () => {
    await expect(saver.put({ configurable: {} }, checkpoint(), meta(0), {})).rejects.toThrow(/thread_id/);
    await expect(saver.put({}, checkpoint(), meta(0), {})).rejects.toThrow(/configurable/);
    await expect(saver.putWrites({ configurable: { thread_id: 't' } }, [['x', 1]], 'task')).rejects.toThrow(/checkpoint_id/);
  });

  it('accepts a numeric thread id as its string form', async () => {
    const config = await saver.put({ configurable: { thread_id: 42 } }, checkpoint(), meta(0), {});
    expect(config.configurable?.thread_id).toBe('42');
    expect((await saver.getTuple({ configurable: { thread_id: 42 } }))?.config).toEqual(config);
  });

  it('refuses a thread id longer than its column instead of truncating it', async () => {
    await expect(saver.put({ configurable: { thread_id: 'x'.repeat(256) } }, checkpoint(), meta(0), {})).rejects.toThrow(/longer than 255 bytes/);
  });

  it('persists a LangGraph graph’s state across invocations on one thread', async () => {
    const State = Annotation.Root({ items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode('add', (s: typeof State.State) => ({ items: [`item-${s.items.length}`] }))
      .addEdge(START, 'add')
      .addEdge('add', END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 'graph-thread' } };
    await graph.invoke({ items: ['start'] }, config);
    const second = await graph.invoke({ items: ['again'] }, config);
    expect(second.items).toEqual(['start', 'item-1', 'again', 'item-3']);
    const history = await all(saver.list(config));
    expect(history.length).toBeGreaterThanOrEqual(4);
  });
});

describe('createTestSaver', () => {
  it('gives each caller a private database and drops it afterwards', async () => {
    const { createTestSaver } = await import('./testing/index.js');
    const a = await createTestSaver(server.url);
    const b = await createTestSaver(server.url);
    try {
      const config = await a.saver.put({ configurable: { thread_id: 't' } }, checkpoint(), meta(0), {});
      expect(await a.saver.getTuple(config)).toBeDefined();
      expect(await b.saver.getTuple(config)).toBeUndefined();
    } finally {
      await a.drop();
      await b.drop();
    }
    const dbs = (await admin('SHOW DATABASES')).map((r) => Object.values(r as object)[0]);
    expect(dbs).not.toContain(new URL(a.url).pathname.slice(1));
  });
});
