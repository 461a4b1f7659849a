/**
 * `--profile`: where the time of each checkpointer operation goes.
 *
 * - the statements each operation sends (traced from the driver connections);
 * - the plans of the SELECTs (MariaDB `ANALYZE FORMAT=JSON`, PostgreSQL `EXPLAIN ANALYZE`);
 * - the floor per round trip (`SELECT 1`, sequential) on each server/driver;
 * - the serializer's share: JsonPlusSerializer time for the values one operation writes or reads.
 */
import { JsonPlusSerializer, type BaseCheckpointSaver, type CheckpointTuple } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Workload } from './data.js';
import { fmt } from './harness.js';

export interface Statement {
  sql: string;
  values: unknown[];
}

interface Profiled {
  name: string;
  saver: BaseCheckpointSaver;
  trace(fn: () => Promise<unknown>): Promise<Statement[]>;
  query(sql: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
}

const out = (s = '') => process.stdout.write(`${s}\n`);
const oneLine = (sql: string, max = 150) => {
  const s = sql.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max)}…` : s;
};

async function microsPerCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / 1e3 / n;
}

async function drain(it: AsyncGenerator<CheckpointTuple>): Promise<void> {
  for await (const _ of it) void _;
}

/** Compact summary of a MariaDB `ANALYZE FORMAT=JSON` plan: per table access type, key, rows read, time. */
function summarizeMariaPlan(json: string): string {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (o.table && typeof o.table === 'object') {
      const t = o.table as Record<string, unknown>;
      const time = typeof t.r_table_time_ms === 'number' ? ` ${t.r_table_time_ms.toFixed(3)} ms` : '';
      found.push(
        `${String(t.table_name)}: ${String(t.access_type)} key=${String(t.key ?? '-')}(${String((t.used_key_parts as unknown[] | undefined)?.length ?? 0)} parts) r_rows=${String(t.r_rows ?? '?')}${time}${t.attached_condition ? ' +filter' : ''}`,
      );
    }
    if (o.filesort) found.push('filesort');
    for (const v of Object.values(o)) walk(v);
  };
  walk(JSON.parse(json));
  return found.join('; ');
}

export async function profile(opts: {
  mysql: Profiled;
  postgres: Profiled;
  work: Workload;
  steps: number;
  cfg: (threadId: string, checkpointId?: string) => RunnableConfig;
}): Promise<void> {
  const { mysql, postgres, work, steps, cfg } = opts;
  const thread = work.threads[1]!;
  const last = work.steps.get(thread)![steps - 1]!;
  const mid = work.steps.get(thread)![Math.floor(steps / 2)]!;
  const ops: [string, (s: BaseCheckpointSaver) => Promise<unknown>][] = [
    ['getTuple (latest)', (s) => s.getTuple(cfg(thread))],
    ['getTuple (by id)', (s) => s.getTuple(cfg(thread, mid.checkpoint.id))],
    ['list (limit 10)', (s) => drain(s.list(cfg(thread), { limit: 10 }))],
    // Re-putting an existing checkpoint and its writes is an upsert: same statements as the first time.
    ['put', (s) => s.put(cfg(thread, last.parentId), last.checkpoint, last.metadata, last.newVersions)],
    ['putWrites (2 writes)', (s) => s.putWrites(cfg(thread, last.checkpoint.id), last.writes, last.taskId)],
  ];

  out('\n## Profile\n');
  out('Round-trip floor (`SELECT 1`, sequential, 300 calls):');
  for (const s of [mysql, postgres]) out(`  ${s.name}: ${fmt(await microsPerCall(300, () => s.query('SELECT 1')), 0)} µs per statement`);

  for (const [op, run] of ops) {
    out(`\n### ${op}`);
    for (const s of [mysql, postgres]) {
      const statements = await s.trace(() => run(s.saver));
      const us = await microsPerCall(30, () => run(s.saver));
      const selects = statements.filter((st) => /^\s*select/i.test(st.sql));
      // The same SELECTs through the bare driver, one after another: server + wire + driver decoding, no saver/serializer work.
      const queryUs =
        selects.length > 0
          ? await microsPerCall(30, async () => {
              for (const st of selects) await s.query(st.sql, st.values);
            })
          : undefined;
      out(
        `${s.name}: ${statements.length} statements, ${fmt(us, 0)} µs per call (sequential)${queryUs !== undefined ? `; its SELECTs alone (server + driver decoding, run one by one): ${fmt(queryUs, 0)} µs` : ''}`,
      );
      const distinct = new Map<string, { st: Statement; n: number }>();
      for (const st of statements) {
        const seen = distinct.get(st.sql);
        if (seen) seen.n++;
        else distinct.set(st.sql, { st, n: 1 });
      }
      for (const { st, n } of distinct.values()) {
        out(`  - ${n > 1 ? `${n} × ` : ''}${oneLine(st.sql)}`);
        if (!/^\s*select/i.test(st.sql)) continue;
        try {
          if (s === mysql) {
            const [row] = await s.query(`ANALYZE FORMAT=JSON ${st.sql}`, st.values);
            out(`      plan: ${summarizeMariaPlan(String(Object.values(row ?? {})[0]))}`);
          } else {
            const rows = await s.query(`EXPLAIN (ANALYZE, COSTS OFF) ${st.sql}`, st.values);
            for (const r of rows) out(`      ${String(Object.values(r)[0])}`);
          }
        } catch (err) {
          out(`      (no plan: ${err instanceof Error ? err.message : String(err)})`);
        }
      }
    }
  }

  // The serializer runs in this process for both savers, on the same values.
  const serde = new JsonPlusSerializer();
  const messages = last.checkpoint.channel_values.messages;
  const [type, bytes] = await serde.dumpsTyped(messages);
  const dumpUs = await microsPerCall(200, () => serde.dumpsTyped(messages));
  const loadUs = await microsPerCall(200, () => serde.loadsTyped(type, bytes));
  const [, midBytes] = await serde.dumpsTyped(mid.checkpoint.channel_values.messages);
  const midLoadUs = await microsPerCall(200, () => serde.loadsTyped(type, midBytes));
  out('\nSerializer (JsonPlusSerializer, same for both savers):');
  out(`  messages at the last step: ${fmt(bytes.length / 1024, 1)} KiB; dumps ${fmt(dumpUs)} µs, loads ${fmt(loadUs)} µs`);
  out(`  messages at mid-thread (by-id reads average this): ${fmt(midBytes.length / 1024, 1)} KiB; loads ${fmt(midLoadUs)} µs`);
}
