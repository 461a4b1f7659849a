/**
 * The behaviour every `Store` must have, as a vitest suite. Run it once per
 * backend with a harness that hands out fresh databases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Migrator, sql } from 'kysely';
import { SqlStore } from '../sql-store.js';
import { RunLifecycle } from '../run-lifecycle.js';
import { admissionStampContract } from './admission-stamp-contract.js';
import { takeContract } from './take-contract.js';
import { lifecycleContract } from './lifecycle-contract.js';
// Ops console (issue 16)
import { consoleContract } from './console-contract.js';
import { assistantsContract } from './assistants-contract.js';
// Crons (issue 12)
import { cronsContract } from './crons-contract.js';
// Store items (issue 12)
import { storeItemsContract } from './store-items-contract.js';
// Usage ledger (issue 17)
import { tokenUsageContract } from './token-usage-contract.js';
// Record and replay (issue 17)
import { recordingsContract } from './recordings-contract.js';
import { uid } from './fixture.js';
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE, storeMigrations } from '../migrations.js';
import type { AuditEntry, NewAuditEntry, Store } from '../types.js';
import { AUDIT_GENESIS_HASH, auditEntryHash, verifyAuditChain } from '../audit-hash.js';

export interface StoreTestDatabase {
  /** A new store over this database (call several times for concurrent clients). */
  open(): Store;
  /** Removes the database. */
  drop(): Promise<void>;
}

export interface StoreTestHarness {
  name: string;
  /** An empty, unmigrated database. */
  newDatabase(): Promise<StoreTestDatabase>;
}

export function storeContract(harness: StoreTestHarness): void {
  describe(`Store contract (${harness.name})`, () => {
    let database: StoreTestDatabase;
    let store: Store;
    let lifecycle: RunLifecycle;

    beforeAll(async () => {
      database = await harness.newDatabase();
      store = database.open();
      await store.migrate();
      lifecycle = new RunLifecycle(store);
    });
    afterAll(async () => {
      await store?.close();
      await database?.drop();
    });

    const newThread = async (tenantId = uid('tenant')) => {
      const thread = await store.createThread({ tenantId, threadId: uid('thread'), metadata: { graph_id: 'agent' } });
      return { tenantId, threadId: thread.threadId, thread };
    };
    /** Admits a run (behind the thread's current one when it has one). */
    const newRun = async (
      tenantId: string,
      threadId: string,
      runId = uid('run'),
      more: { assistantId?: string; kwargs?: Record<string, unknown>; metadata?: Record<string, unknown>; multitaskStrategy?: string } = {},
    ) => {
      const res = await lifecycle.admit({
        run: { runId, threadId, tenantId, assistantId: 'agent', kwargs: { input: { messages: [] } }, ...more },
        whenBusy: 'defer',
      });
      if (res.kind === 'busy' || res.kind === 'no_thread') throw new Error(`run not admitted: ${res.kind}`);
      return { run: res.run, created: res.kind !== 'exists' };
    };

    describe('migrate', () => {
      it('is idempotent: a second migrate() changes nothing', async () => {
        const { tenantId, threadId } = await newThread();
        await store.migrate();
        expect(await store.getThread(tenantId, threadId)).toBeDefined();
      });

      it('lets three clients migrate a fresh database at once, applying each migration once', async () => {
        const fresh = await harness.newDatabase();
        const clients = [fresh.open(), fresh.open(), fresh.open()];
        try {
          await Promise.all(clients.map((c) => c.migrate()));
          const db = (clients[0] as SqlStore).db;
          const applied = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
          expect(applied.rows.map((r) => r.name)).toEqual([
            '0001_threads_runs',
            '0002_tool_effects',
            '0003_thread_uploads',
            '0004_approval_audit',
            '0005_runs_tenant_status',
            '0006_runs_status_updated',
            '0007_webhook_deliveries',
            '0008_approval_audit_approver',
            '0009_run_lifecycle',
            '0010_dead_letter',
            '0011_assistants',
            '0012_crons',
            // Store items (issue 12)
            '0013_store_items',
            // Usage ledger (issue 17)
            '0014_token_usage',
            // Record and replay (issue 17)
            '0015_run_recordings',
            // Ops console (issue 16)
            '0018_console_indexes',
            // OAuth grants of remote MCP servers (issue 14)
            '0019_mcp_oauth',
            // Run recordings' tool sets (issue 9)
            '0020_recording_toolsets',
          ]);
          const t = await clients[1]!.createThread({ tenantId: 'a', threadId: 'x' });
          expect(await clients[2]!.getThread('a', 'x')).toEqual(t);
        } finally {
          await Promise.all(clients.map((c) => c.close()));
          await fresh.drop();
        }
      });
    });

    describe('threads', () => {
      it('createThread on an existing id returns the existing thread unchanged', async () => {
        const tenantId = uid('tenant');
        const first = await store.createThread({ tenantId, threadId: 'same', metadata: { n: 1 } });
        const second = await store.createThread({ tenantId, threadId: 'same', metadata: { n: 2 } });
        expect(second).toEqual(first);
        expect(second.metadata).toEqual({ n: 1 });
        expect(first.status).toBe('idle');
        expect(first.values).toBeNull();
      });

      it('updateThread replaces metadata; the end of a run writes the values', async () => {
        const { tenantId, threadId } = await newThread();
        const values = { messages: [{ type: 'ai', content: 'héllo ✓ 😀' }], nested: { a: [1, 2, { b: null }] } };
        await store.updateThread(tenantId, threadId, { metadata: { k: 'v' } });
        const { run } = await newRun(tenantId, threadId);
        expect(await store.getThread(tenantId, threadId)).toMatchObject({ status: 'busy', activeRunId: run.runId, metadata: { k: 'v' } });
        await lifecycle.end({ tenantId, runId: run.runId, status: 'success', values, cause: 'finished' });
        expect(await store.getThread(tenantId, threadId)).toMatchObject({ status: 'idle', activeRunId: null, values, metadata: { k: 'v' } });
      });

      it('searchThreads filters by status and metadata and pages newest first', async () => {
        const tenantId = uid('tenant');
        for (let i = 0; i < 5; i++) {
          await store.createThread({ tenantId, threadId: `t${i}`, metadata: { parity: i % 2 === 0 ? 'even' : 'odd', tags: { i } } });
        }
        await newRun(tenantId, 't4');
        const all = await store.searchThreads(tenantId, { limit: 10, offset: 0 });
        expect(all.map((t) => t.threadId).sort()).toEqual(['t0', 't1', 't2', 't3', 't4']);
        for (let i = 1; i < all.length; i++) expect(all[i - 1]!.createdAt.getTime()).toBeGreaterThanOrEqual(all[i]!.createdAt.getTime());
        const even = await store.searchThreads(tenantId, { limit: 10, offset: 0, metadata: { parity: 'even' } });
        expect(even.map((t) => t.threadId).sort()).toEqual(['t0', 't2', 't4']);
        const evenPage = await store.searchThreads(tenantId, { limit: 1, offset: 1, metadata: { parity: 'even' } });
        expect(evenPage).toEqual([even[1]]);
        const nested = await store.searchThreads(tenantId, { limit: 10, offset: 0, metadata: { tags: { i: 3 } } });
        expect(nested.map((t) => t.threadId)).toEqual(['t3']);
        const busy = await store.searchThreads(tenantId, { limit: 10, offset: 0, status: 'busy' });
        expect(busy.map((t) => t.threadId)).toEqual(['t4']);
        const byId = await store.searchThreads(tenantId, { limit: 10, offset: 0, sortBy: 'thread_id', sortOrder: 'asc' });
        expect(byId.map((t) => t.threadId)).toEqual(['t0', 't1', 't2', 't3', 't4']);
        const byIdDesc = await store.searchThreads(tenantId, { limit: 2, offset: 1, sortBy: 'thread_id', sortOrder: 'desc' });
        expect(byIdDesc.map((t) => t.threadId)).toEqual(['t3', 't2']);
        const some = await store.searchThreads(tenantId, {
          limit: 10,
          offset: 0,
          ids: ['t1', 't2', 't3', 'nope'],
          metadata: { parity: 'odd' },
          sortBy: 'thread_id',
        });
        expect(some.map((t) => t.threadId)).toEqual(['t3', 't1']);
        expect(await store.searchThreads(tenantId, { limit: 10, offset: 0, ids: [] })).toEqual([]);
        expect(await store.searchThreads(uid('tenant'), { limit: 10, offset: 0, ids: ['t1'] })).toEqual([]);
      });

      it('deleteThread removes the thread and its runs, and reports whether it existed', async () => {
        const { tenantId, threadId } = await newThread();
        const { run } = await newRun(tenantId, threadId);
        expect(await store.deleteThread(tenantId, threadId)).toBe(true);
        expect(await store.getThread(tenantId, threadId)).toBeUndefined();
        expect(await store.getRun(tenantId, run.runId)).toBeUndefined();
        expect(await store.listRuns(tenantId, threadId)).toEqual([]);
        expect(await store.deleteThread(tenantId, threadId)).toBe(false);
      });

      it('rejects ids that are empty, too long or padded with spaces', async () => {
        await expect(store.createThread({ tenantId: 't', threadId: '' })).rejects.toThrow(/Invalid threadId/);
        await expect(store.createThread({ tenantId: 't', threadId: 'x'.repeat(129) })).rejects.toThrow(/Invalid threadId/);
        await expect(store.createThread({ tenantId: 't ', threadId: 'x' })).rejects.toThrow(/Invalid tenantId/);
      });
    });

    // --- threads API in full (issue 11): count in SQL, state set outside a run --------------
    describe('threads: count and state set outside a run', () => {
      it('countThreads counts what the filters match: metadata keys (JSON equality), values, status, per tenant', async () => {
        const tenantId = uid('tenant');
        const metas = [
          { p: 'even', tags: { i: 0 } },
          { p: 'odd', flag: true },
          { p: 'even', n: 2, nul: null },
          { p: 'odd', n: '2' },
        ];
        for (const [i, metadata] of metas.entries()) await store.createThread({ tenantId, threadId: `c${i}`, metadata });
        await store.createThread({ tenantId: uid('tenant'), threadId: 'c0', metadata: { p: 'even' } });
        await newRun(tenantId, 'c3');
        expect(await store.countThreads(tenantId, {})).toBe(4);
        expect(await store.countThreads(tenantId, { metadata: { p: 'even' } })).toBe(2);
        expect(await store.countThreads(tenantId, { metadata: { n: 2 } })).toBe(1);
        expect(await store.countThreads(tenantId, { metadata: { n: '2' } })).toBe(1);
        expect(await store.countThreads(tenantId, { metadata: { flag: true } })).toBe(1);
        expect(await store.countThreads(tenantId, { metadata: { nul: null } })).toBe(1);
        expect(await store.countThreads(tenantId, { metadata: { tags: { i: 0 } } })).toBe(1);
        expect(await store.countThreads(tenantId, { metadata: { p: 'even', missing: 1 } })).toBe(0);
        expect(await store.countThreads(tenantId, { status: 'busy' })).toBe(1);
        expect(await store.countThreads(tenantId, { metadata: { p: 'odd' }, status: 'idle' })).toBe(1);
        expect(await lifecycle.restoreThread(tenantId, 'c0', { values: { max_loops: 7, todos: [] }, status: 'interrupted' })).toBe(true);
        expect(await store.countThreads(tenantId, { values: { max_loops: 7 } })).toBe(1);
        expect(await store.countThreads(tenantId, { values: { max_loops: 7 }, status: 'interrupted' })).toBe(1);
        expect(await store.countThreads(tenantId, { values: { max_loops: 8 } })).toBe(0);
      });

      it('restoreThread (a state edit outside a run) writes values and status only while no run holds the thread', async () => {
        const { tenantId, threadId } = await newThread();
        expect(await lifecycle.restoreThread(tenantId, threadId, { values: { messages: ['a'] }, status: 'interrupted' })).toBe(true);
        expect(await store.getThread(tenantId, threadId)).toMatchObject({ values: { messages: ['a'] }, status: 'interrupted', activeRunId: null });
        const { run } = await newRun(tenantId, threadId);
        expect(await lifecycle.restoreThread(tenantId, threadId, { values: { messages: ['b'] }, status: 'idle' })).toBe(false);
        expect(await store.getThread(tenantId, threadId)).toMatchObject({ values: { messages: ['a'] }, status: 'busy', activeRunId: run.runId });
        expect(await lifecycle.restoreThread(uid('tenant'), threadId, { values: {}, status: 'idle' })).toBe(false);
      });
    });
    // --- end threads API ---------------------------------------------------------------------

    describe('tenant isolation', () => {
      it('tenant B can neither read, change, list nor delete tenant A’s thread and run', async () => {
        const a = await newThread();
        const b = uid('tenant');
        const { run } = await newRun(a.tenantId, a.threadId);

        expect(await store.getThread(b, a.threadId)).toBeUndefined();
        expect(await store.getRun(b, run.runId)).toBeUndefined();
        expect(await store.listRuns(b, a.threadId)).toEqual([]);
        expect(await store.searchThreads(b, { limit: 100, offset: 0 })).toEqual([]);

        const threadBefore = await store.getThread(a.tenantId, a.threadId);
        await store.updateThread(b, a.threadId, { metadata: { owned: 'by b' } });
        expect(
          await lifecycle.end({ tenantId: b, runId: run.runId, status: 'error', error: { error: 'Error', message: 'b was here' }, cause: 'finished' }),
        ).toEqual({ kind: 'missing' });
        expect(await lifecycle.start({ ...run, tenantId: b })).toEqual({ kind: 'missing' });
        expect(await lifecycle.admit({ run: { runId: uid('run'), threadId: a.threadId, tenantId: b, assistantId: 'agent' }, whenBusy: 'defer' })).toEqual({
          kind: 'no_thread',
        });
        expect(await store.deleteThread(b, a.threadId)).toBe(false);

        expect(await store.getThread(a.tenantId, a.threadId)).toEqual(threadBefore);
        expect(await store.getRun(a.tenantId, run.runId)).toEqual(run);
      });

      it('the same thread id under two tenants is two threads', async () => {
        const threadId = uid('shared');
        const ta = await store.createThread({ tenantId: 'tenant-a', threadId, metadata: { who: 'a' } });
        const tb = await store.createThread({ tenantId: 'tenant-b', threadId, metadata: { who: 'b' } });
        expect(ta.metadata).toEqual({ who: 'a' });
        expect(tb.metadata).toEqual({ who: 'b' });
        expect(await store.deleteThread('tenant-b', threadId)).toBe(true);
        expect(await store.getThread('tenant-a', threadId)).toEqual(ta);
      });

      it('tenant ids differing only in letter case are distinct tenants', async () => {
        const threadId = uid('case');
        await store.createThread({ tenantId: 'Acme', threadId });
        expect(await store.getThread('acme', threadId)).toBeUndefined();
      });

      it('creating a run with an id another tenant uses fails without touching that run', async () => {
        const a = await newThread();
        const { run } = await newRun(a.tenantId, a.threadId);
        const b = await newThread();
        await expect(newRun(b.tenantId, b.threadId, run.runId)).rejects.toMatchObject({ code: 'CONFLICT' });
        expect(await store.getRun(a.tenantId, run.runId)).toEqual(run);
      });
    });

    describe('runs', () => {
      it('admitting one run id twice stores one run and reports created=false the second time', async () => {
        const { tenantId, threadId } = await newThread();
        const first = await newRun(tenantId, threadId, 'dup-run-' + uid('r'));
        const second = await newRun(tenantId, threadId, first.run.runId, { assistantId: 'other', kwargs: { different: true } });
        expect(first.created).toBe(true);
        expect(second.created).toBe(false);
        expect(second.run).toEqual(first.run);
        expect(await store.listRuns(tenantId, threadId)).toHaveLength(1);
      });

      it('admission stores a pending run with its request, metadata and defaults', async () => {
        const { tenantId, threadId } = await newThread();
        const kwargs = { input: { messages: [{ role: 'user', content: 'hi' }] }, stream_mode: ['values'], webhook: 'https://x.test/h' };
        const { run } = await newRun(tenantId, threadId, uid('run'), { kwargs, metadata: { source: 'test' }, multitaskStrategy: 'enqueue' });
        expect(run).toMatchObject({
          status: 'pending',
          attempts: 0,
          error: null,
          startedAt: null,
          endedAt: null,
          kwargs,
          metadata: { source: 'test' },
          multitaskStrategy: 'enqueue',
          assistantId: 'agent',
          deferred: false,
        });
        const stored = await store.getRun(tenantId, run.runId);
        expect({ ...stored, createdAt: undefined, updatedAt: undefined }).toEqual({ ...run, createdAt: undefined, updatedAt: undefined });
        expect(stored?.createdAt.getTime()).toBe(run.createdAt.getTime());
        const { run: plain } = await newRun(tenantId, threadId);
        expect(plain.multitaskStrategy).toBe('reject');
      });

      it('start and end change the run only from pending/running, counting attempts and keeping the first start', async () => {
        const { tenantId, threadId } = await newThread();
        const { run } = await newRun(tenantId, threadId);
        const first = await lifecycle.start(run);
        expect(first).toMatchObject({ kind: 'started', run: { status: 'running', attempts: 1 } });
        const startedAt = first.kind === 'started' ? first.run.startedAt : null;
        const again = await lifecycle.start(first.kind === 'started' ? first.run : run);
        expect(again).toMatchObject({ kind: 'started', run: { status: 'running', attempts: 2 } });
        expect(
          await lifecycle.end({ tenantId, runId: run.runId, status: 'error', error: { error: 'Error', message: 'boom' }, cause: 'finished' }),
        ).toMatchObject({ kind: 'ended', threadStatus: 'error' });
        expect(await lifecycle.end({ tenantId, runId: run.runId, status: 'success', cause: 'finished' })).toMatchObject({
          kind: 'already_ended',
          run: { status: 'error' },
        });
        expect(await lifecycle.start(run)).toMatchObject({ kind: 'ended' });
        const after = await store.getRun(tenantId, run.runId);
        expect(after).toMatchObject({ status: 'error', attempts: 2, error: 'boom' });
        expect(after?.startedAt?.getTime()).toBe(startedAt?.getTime());
        expect(after?.endedAt).not.toBeNull();
        expect(await store.getThread(tenantId, threadId)).toMatchObject({ status: 'error', activeRunId: null });
      });

      it('listRuns returns the thread’s runs newest first, with limit, offset and status filter', async () => {
        const { tenantId, threadId } = await newThread();
        const other = await newThread(tenantId);
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) ids.push((await newRun(tenantId, threadId, `${uid('order')}-${i}`)).run.runId);
        await newRun(tenantId, other.threadId);
        const runs = await store.listRuns(tenantId, threadId);
        expect(runs.map((r) => r.runId)).toEqual([...ids].reverse());
        expect((await store.listRuns(tenantId, threadId, { limit: 2, offset: 1 })).map((r) => r.runId)).toEqual([ids[2], ids[1]]);
        await lifecycle.end({ tenantId, runId: ids[1]!, status: 'success', cause: 'finished' });
        expect((await store.listRuns(tenantId, threadId, { status: 'success' })).map((r) => r.runId)).toEqual([ids[1]]);
      });
    });

    it('lists runs left in a status across tenants, oldest first', async () => {
      const a = await newThread();
      const b = await newThread();
      const ra = (await newRun(a.tenantId, a.threadId)).run;
      const rb = (await newRun(b.tenantId, b.threadId)).run;
      await lifecycle.start(ra);
      await lifecycle.start(rb);
      const found = await store.listRunsInStatus('running', new Date(Date.now() + 60_000), 1000);
      const ids = found.map((r) => r.runId);
      expect(ids).toEqual(expect.arrayContaining([ra.runId, rb.runId]));
      expect(await store.listRunsInStatus('running', new Date(0), 10)).toEqual([]);
    });

    it('logs webhook attempts per delivery, tenant-scoped, first to last, each once', async () => {
      const tenantId = uid('hooks');
      const base = { tenantId, deliveryId: 'd-1', runId: 'd-1', at: new Date(1_700_000_000_000), statusCode: null, error: null, durationMs: 12 };
      await store.recordWebhookAttempt({ ...base, attempt: 2, outcome: 'delivered', statusCode: 204 });
      await store.recordWebhookAttempt({ ...base, attempt: 1, outcome: 'retry', statusCode: 500, error: 'answered HTTP 500' });
      await store.recordWebhookAttempt({ ...base, attempt: 1, outcome: 'failed' });
      const log = await store.listWebhookAttempts(tenantId, 'd-1');
      expect(log.map((a) => [a.attempt, a.outcome, a.statusCode, a.error])).toEqual([
        [1, 'retry', 500, 'answered HTTP 500'],
        [2, 'delivered', 204, null],
      ]);
      expect(log[0]!.at.getTime()).toBe(1_700_000_000_000);
      expect(await store.listWebhookAttempts(uid('other'), 'd-1')).toEqual([]);
    });

    it("counts a tenant's pending and running runs only", async () => {
      const { tenantId, threadId } = await newThread();
      const a = (await newRun(tenantId, threadId)).run;
      const b = (await newRun(tenantId, threadId)).run;
      await newRun(tenantId, threadId);
      await lifecycle.start(a);
      await lifecycle.end({ tenantId, runId: b.runId, status: 'success', cause: 'finished' });
      expect(await store.countActiveRuns(tenantId)).toBe(2);
      expect(await store.countActiveRuns(uid('nobody'))).toBe(0);
    });

    describe('effect ledger', () => {
      const key = (tenantId: string, threadId: string, runId: string, toolCallId = 'call_1') => ({
        tenantId,
        threadId,
        runId,
        toolCallId,
        toolName: 'write_file',
      });

      it('the first claim of a tool call creates a started entry; later claims return it', async () => {
        const { tenantId, threadId } = await newThread();
        const { run } = await newRun(tenantId, threadId);
        const first = await store.claimToolEffect(key(tenantId, threadId, run.runId));
        expect(first).toMatchObject({ created: true, effect: { state: 'started', executions: 1, content: null } });
        // The entry a claim returns without reading it back is the stored one.
        expect([first.effect]).toEqual(await store.listToolEffects(tenantId, run.runId));
        const again = await store.claimToolEffect(key(tenantId, threadId, run.runId));
        expect(again).toMatchObject({ created: false, effect: { state: 'started' } });
      });

      it('completing records the result once; a second completion keeps the first result', async () => {
        const { tenantId, threadId } = await newThread();
        const { run } = await newRun(tenantId, threadId);
        await store.claimToolEffect(key(tenantId, threadId, run.runId));
        const done = await store.completeToolEffect(tenantId, run.runId, 'call_1', { content: 'Wrote 3 bytes', isError: false });
        expect(done).toMatchObject({ state: 'completed', content: 'Wrote 3 bytes', isError: false });
        expect([done]).toEqual(await store.listToolEffects(tenantId, run.runId));
        const second = await store.completeToolEffect(tenantId, run.runId, 'call_1', { content: 'other', isError: true });
        expect(second).toMatchObject({ content: 'Wrote 3 bytes', isError: false });
        const claim = await store.claimToolEffect(key(tenantId, threadId, run.runId));
        expect(claim).toMatchObject({ created: false, effect: { state: 'completed', content: 'Wrote 3 bytes' } });
      });

      it('restart counts executions of a started entry only', async () => {
        const { tenantId, threadId } = await newThread();
        const { run } = await newRun(tenantId, threadId);
        await store.claimToolEffect(key(tenantId, threadId, run.runId));
        await store.restartToolEffect(tenantId, run.runId, 'call_1');
        expect((await store.listToolEffects(tenantId, run.runId))[0]?.executions).toBe(2);
        await store.completeToolEffect(tenantId, run.runId, 'call_1', { content: 'x', isError: false });
        await store.restartToolEffect(tenantId, run.runId, 'call_1');
        expect((await store.listToolEffects(tenantId, run.runId))[0]?.executions).toBe(2);
      });

      it("another tenant can neither read nor claim a tenant's tool call", async () => {
        const a = await newThread();
        const b = await newThread();
        const { run } = await newRun(a.tenantId, a.threadId);
        await store.claimToolEffect(key(a.tenantId, a.threadId, run.runId));
        expect(await store.listToolEffects(b.tenantId, run.runId)).toEqual([]);
        await expect(store.claimToolEffect(key(b.tenantId, b.threadId, run.runId))).rejects.toMatchObject({ code: 'CONFLICT' });
      });

      it('deleting a thread deletes its ledger entries', async () => {
        const { tenantId, threadId } = await newThread();
        const { run } = await newRun(tenantId, threadId);
        await store.claimToolEffect(key(tenantId, threadId, run.runId));
        await store.deleteThread(tenantId, threadId);
        expect(await store.listToolEffects(tenantId, run.runId)).toEqual([]);
      });
    });

    describe('uploads', () => {
      const upload = (tenantId: string, threadId: string, name: string) => ({
        tenantId,
        threadId,
        uploadId: uid('up'),
        path: `uploads/${name}`,
        name,
        originalName: `../${name}`,
        type: 'pdf',
        mime: 'application/pdf',
        size: 1234,
        mismatch: null,
      });

      it('a run claims the pending uploads once; the next run gets only newer ones', async () => {
        const { tenantId, threadId } = await newThread();
        await store.addUpload(upload(tenantId, threadId, 'a.pdf'));
        await store.addUpload(upload(tenantId, threadId, '报告.pdf'));
        const first = await store.claimUploads(tenantId, threadId, 'run-1');
        expect(first.map((u) => [u.name, u.runId, u.size, u.originalName])).toEqual([
          ['a.pdf', 'run-1', 1234, '../a.pdf'],
          ['报告.pdf', 'run-1', 1234, '../报告.pdf'],
        ]);
        expect((await store.claimUploads(tenantId, threadId, 'run-1')).map((u) => u.name)).toEqual(['a.pdf', '报告.pdf']);
        expect(await store.claimUploads(tenantId, threadId, 'run-2')).toEqual([]);
        await store.addUpload(upload(tenantId, threadId, 'c.xlsx'));
        expect((await store.claimUploads(tenantId, threadId, 'run-3')).map((u) => u.name)).toEqual(['c.xlsx']);
        expect((await store.listUploads(tenantId, threadId)).map((u) => u.runId)).toEqual(['run-1', 'run-1', 'run-3']);
      });

      it('concurrent claims by two runs never hand one upload to both', async () => {
        const { tenantId, threadId } = await newThread();
        for (let i = 0; i < 10; i++) await store.addUpload(upload(tenantId, threadId, `f${i}.pdf`));
        const other = database.open();
        try {
          const [x, y] = await Promise.all([store.claimUploads(tenantId, threadId, 'run-x'), other.claimUploads(tenantId, threadId, 'run-y')]);
          expect(x.length + y.length).toBe(10);
          expect(new Set([...x, ...y].map((u) => u.uploadId)).size).toBe(10);
        } finally {
          await other.close();
        }
      });

      it('uploads are scoped by tenant and deleted with the thread', async () => {
        const a = await newThread();
        await store.addUpload(upload(a.tenantId, a.threadId, 'secret.pdf'));
        expect(await store.listUploads('someone-else', a.threadId)).toEqual([]);
        expect(await store.claimUploads('someone-else', a.threadId, 'run-z')).toEqual([]);
        await store.deleteThread(a.tenantId, a.threadId);
        expect(await store.listUploads(a.tenantId, a.threadId)).toEqual([]);
      });
    });

    describe('approval audit trail', () => {
      const entry = (tenantId: string, n: number, extra: Partial<NewAuditEntry> = {}): NewAuditEntry => ({
        tenantId,
        threadId: 'th-1',
        runId: 'run-1',
        toolCallId: `call-${n}`,
        toolName: 'http_fetch',
        argsSha256: 'a'.repeat(64),
        decision: 'approved',
        reason: 'api call',
        rule: 'tool:http_fetch:medium_risk',
        riskLevel: 'medium',
        decidedBy: 'alice',
        comment: '',
        ...extra,
      });

      it('chains entries per tenant (seq 1.., prev_hash links) and records a call once', async () => {
        const tenant = uid('audit');
        const a = await store.appendAuditEntry(entry(tenant, 1));
        const b = await store.appendAuditEntry(entry(tenant, 2, { decision: 'rejected', runId: 'run-2' }));
        expect([a.entry.seq, b.entry.seq]).toEqual([1, 2]);
        expect(a.entry.prevHash).toBe(AUDIT_GENESIS_HASH);
        expect(b.entry.prevHash).toBe(a.entry.hash);
        expect(a.entry.hash).toBe(auditEntryHash(a.entry));
        const again = await store.appendAuditEntry(entry(tenant, 1, { decision: 'rejected' }));
        expect(again).toMatchObject({ duplicate: true, entry: { seq: 1, decision: 'approved' } });
        const all = await store.listAuditEntries(tenant);
        expect(all.map((e) => e.seq)).toEqual([1, 2]);
        expect(all[0]).toEqual(a.entry);
        expect(verifyAuditChain(all, await store.getAuditHead(tenant))).toBeUndefined();
        expect(await store.getAuditHead(tenant)).toEqual({ seq: 2, hash: b.entry.hash });
        expect(await store.getAuditEntry(tenant, 2)).toEqual(b.entry);
        expect(await store.getAuditEntry(tenant, 3)).toBeUndefined();
        expect((await store.listAuditEntries(tenant, { runId: 'run-2' })).map((e) => e.seq)).toEqual([2]);
        expect((await store.listAuditEntries(tenant, { afterSeq: 1 })).map((e) => e.seq)).toEqual([2]);
        expect((await store.listAuditEntries(tenant, { limit: 1 })).map((e) => e.seq)).toEqual([1]);
        const other = uid('other');
        expect(await store.listAuditEntries(other)).toEqual([]);
        expect(await store.getAuditHead(other)).toBeUndefined();
        expect(verifyAuditChain([], await store.getAuditHead(other))).toBeUndefined();
      });

      it('keeps one chain per tenant: the same call id in two tenants is two first entries', async () => {
        const [t1, t2] = [uid('audit'), uid('audit')];
        const a = await store.appendAuditEntry(entry(t1, 1));
        const b = await store.appendAuditEntry(entry(t2, 1));
        expect([a.entry.seq, a.duplicate, b.entry.seq, b.duplicate]).toEqual([1, false, 1, false]);
        expect(b.entry.prevHash).toBe(AUDIT_GENESIS_HASH);
      });

      it('stores text exactly as hashed (unicode, lone surrogates made well-formed, long text cut)', async () => {
        const tenant = uid('audit');
        const { entry: e } = await store.appendAuditEntry(
          entry(tenant, 1, { reason: '高风险 🚨 \ud800 end', comment: 'x'.repeat(20_000), decidedBy: 'Zoë <zoe@example.com>' }),
        );
        expect(e.reason).toBe('高风险 🚨 \ufffd end');
        expect(e.comment.length).toBe(16_000);
        const [stored] = await store.listAuditEntries(tenant);
        expect(stored).toEqual(e);
        expect(verifyAuditChain([stored!], await store.getAuditHead(tenant))).toBeUndefined();
      });

      it('refuses an entry with a bad id, hash, decision or risk level', async () => {
        const tenant = uid('audit');
        await expect(store.appendAuditEntry(entry(tenant, 1, { runId: '' }))).rejects.toThrow(/Invalid runId/);
        await expect(store.appendAuditEntry(entry(tenant, 1, { toolCallId: 'x'.repeat(129) }))).rejects.toThrow(/Invalid toolCallId/);
        await expect(store.appendAuditEntry(entry(tenant, 1, { argsSha256: 'nope' }))).rejects.toThrow(/Invalid argsSha256/);
        await expect(store.appendAuditEntry(entry(tenant, 1, { decision: 'maybe' as 'approved' }))).rejects.toThrow(/Invalid decision/);
        await expect(store.appendAuditEntry(entry(tenant, 1, { riskLevel: 'extreme' as 'high' }))).rejects.toThrow(/Invalid riskLevel/);
        expect(await store.listAuditEntries(tenant)).toEqual([]);
      });

      it('concurrent appends from three clients keep one gapless chain (20 appends → seq 1..20)', async () => {
        const tenant = uid('audit');
        const clients = [store, database.open(), database.open()];
        try {
          // The same call recorded twice, concurrently, is one entry.
          const calls = [...Array.from({ length: 20 }, (_, i) => i), 7];
          const results = await Promise.all(calls.map((n, i) => clients[i % 3]!.appendAuditEntry(entry(tenant, n))));
          expect(results.filter((r) => r.duplicate)).toHaveLength(1);
          const all = await store.listAuditEntries(tenant, { limit: 100 });
          expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
          expect(new Set(all.map((e) => e.toolCallId)).size).toBe(20);
          expect(verifyAuditChain(all, await store.getAuditHead(tenant))).toBeUndefined();
        } finally {
          await Promise.all(clients.slice(1).map((c) => c.close()));
        }
      });

      it('verification finds an entry edited with raw SQL', async () => {
        const tenant = uid('audit');
        for (let i = 1; i <= 4; i++) await store.appendAuditEntry(entry(tenant, i));
        const db = (store as SqlStore).db;
        await db.updateTable('approval_audit').set({ reason: 'nothing to see' }).where('tenant_id', '=', tenant).where('seq', '=', 2).execute();
        expect(verifyAuditChain(await store.listAuditEntries(tenant), await store.getAuditHead(tenant))).toEqual({
          seq: 2,
          detail: 'entry 2 was altered (its content does not match its hash)',
        });
      });

      it('verification finds an entry edited with its hash recomputed (the next entry no longer follows it)', async () => {
        const tenant = uid('audit');
        for (let i = 1; i <= 3; i++) await store.appendAuditEntry(entry(tenant, i));
        const db = (store as SqlStore).db;
        const e2 = (await store.getAuditEntry(tenant, 2))!;
        const forged = { ...e2, decision: 'rejected' as const };
        await db
          .updateTable('approval_audit')
          .set({ decision: 'rejected', hash: auditEntryHash(forged) })
          .where('tenant_id', '=', tenant)
          .where('seq', '=', 2)
          .execute();
        expect(verifyAuditChain(await store.listAuditEntries(tenant))).toEqual({ seq: 3, detail: 'entry 3 does not follow the hash of entry 2' });
      });

      it('verification finds an entry deleted from the middle or from the end of the trail', async () => {
        const db = (store as SqlStore).db;
        const middle = uid('audit');
        for (let i = 1; i <= 3; i++) await store.appendAuditEntry(entry(middle, i));
        await db.deleteFrom('approval_audit').where('tenant_id', '=', middle).where('seq', '=', 2).execute();
        expect(verifyAuditChain(await store.listAuditEntries(middle), await store.getAuditHead(middle))).toEqual({
          seq: 2,
          detail: 'entry 2 is missing (found 3 next)',
        });
        const end = uid('audit');
        for (let i = 1; i <= 3; i++) await store.appendAuditEntry(entry(end, i));
        await db.deleteFrom('approval_audit').where('tenant_id', '=', end).where('seq', '=', 3).execute();
        expect(verifyAuditChain(await store.listAuditEntries(end))).toBeUndefined(); // the entries alone cannot tell…
        expect(verifyAuditChain(await store.listAuditEntries(end), await store.getAuditHead(end))).toEqual({
          seq: 3,
          detail: 'entries 3..3 are missing (the trail ends at 2, its head says 3)',
        });
      });

      /** The hash as the store computed it before migration 0008 (frozen here on purpose). */
      const v1Hash = (e: Omit<AuditEntry, 'hash' | 'approverTenantId' | 'approverKeyId'>) =>
        createHash('sha256')
          .update(
            JSON.stringify([
              e.prevHash,
              e.tenantId,
              e.seq,
              e.threadId,
              e.runId,
              e.toolCallId,
              e.toolName,
              e.argsSha256,
              e.decision,
              e.reason,
              e.rule,
              e.riskLevel,
              e.decidedBy,
              e.comment,
              e.createdAtMs,
            ]),
            'utf8',
          )
          .digest('hex');

      it('records the server-set approver (tenant, key id) beside the client label, and hashes it', async () => {
        const tenant = uid('audit');
        const { entry: e } = await store.appendAuditEntry(
          entry(tenant, 1, { decidedBy: 'ceo@example.com', approverTenantId: tenant, approverKeyId: 'key_0123456789ab' }),
        );
        expect(e).toMatchObject({ decidedBy: 'ceo@example.com', approverTenantId: tenant, approverKeyId: 'key_0123456789ab' });
        expect(e.hash).toBe(auditEntryHash(e));
        expect(e.hash).not.toBe(v1Hash(e));
        const [stored] = await store.listAuditEntries(tenant);
        expect(stored).toEqual(e);
        // A rules decision has no approver.
        const { entry: d } = await store.appendAuditEntry(entry(tenant, 2, { decision: 'denied', decidedBy: 'rules' }));
        expect([d.approverTenantId, d.approverKeyId]).toEqual(['', '']);
        expect(verifyAuditChain(await store.listAuditEntries(tenant), await store.getAuditHead(tenant))).toBeUndefined();
      });

      it('an entry without an approver hashes exactly as before migration 0008', async () => {
        const tenant = uid('audit');
        const { entry: e } = await store.appendAuditEntry(entry(tenant, 1));
        expect(e.hash).toBe(v1Hash(e));
      });

      it('verification finds an approver identity edited, added or blanked with raw SQL', async () => {
        const db = (store as SqlStore).db;
        const edited = uid('audit');
        await store.appendAuditEntry(entry(edited, 1, { approverTenantId: edited, approverKeyId: 'key_aaaaaaaaaaaa' }));
        await db.updateTable('approval_audit').set({ approver_key_id: 'key_bbbbbbbbbbbb' }).where('tenant_id', '=', edited).execute();
        expect(verifyAuditChain(await store.listAuditEntries(edited), await store.getAuditHead(edited))).toEqual({
          seq: 1,
          detail: 'entry 1 was altered (its content does not match its hash)',
        });
        const blanked = uid('audit');
        await store.appendAuditEntry(entry(blanked, 1, { approverTenantId: blanked, approverKeyId: 'key_aaaaaaaaaaaa' }));
        await db.updateTable('approval_audit').set({ approver_tenant_id: '', approver_key_id: '' }).where('tenant_id', '=', blanked).execute();
        expect(verifyAuditChain(await store.listAuditEntries(blanked), await store.getAuditHead(blanked))?.seq).toBe(1);
        const added = uid('audit');
        await store.appendAuditEntry(entry(added, 1));
        await db.updateTable('approval_audit').set({ approver_tenant_id: added, approver_key_id: 'key_aaaaaaaaaaaa' }).where('tenant_id', '=', added).execute();
        expect(verifyAuditChain(await store.listAuditEntries(added), await store.getAuditHead(added))?.seq).toBe(1);
      });

      it('refuses an approver of another tenant, a key id without its tenant, or a malformed id', async () => {
        const tenant = uid('audit');
        await expect(store.appendAuditEntry(entry(tenant, 1, { approverTenantId: 'someone-else', approverKeyId: 'key_x' }))).rejects.toThrow(
          /Invalid approverTenantId/,
        );
        await expect(store.appendAuditEntry(entry(tenant, 1, { approverKeyId: 'key_x' }))).rejects.toThrow(/without approverTenantId/);
        await expect(store.appendAuditEntry(entry(tenant, 1, { approverTenantId: tenant, approverKeyId: 'k'.repeat(129) }))).rejects.toThrow(
          /Invalid approverKeyId/,
        );
        expect(await store.listAuditEntries(tenant)).toEqual([]);
      });

      it('a trail written before migration 0008 still verifies after it, and goes on with approver entries', async () => {
        const fresh = await harness.newDatabase();
        const old = fresh.open();
        try {
          const sqlStore = old as SqlStore;
          const all = storeMigrations(sqlStore.dialect);
          const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '0008'));
          const res = await new Migrator({
            db: sqlStore.db,
            provider: { getMigrations: async () => before },
            migrationTableName: MIGRATION_TABLE,
            migrationLockTableName: MIGRATION_LOCK_TABLE,
          }).migrateToLatest();
          expect(res.error).toBeUndefined();
          // Two entries as the pre-0008 code wrote them (no approver columns yet).
          const tenant = uid('audit');
          let prev = AUDIT_GENESIS_HASH;
          for (let seq = 1; seq <= 2; seq++) {
            const e = { ...entry(tenant, seq), seq, createdAtMs: 1_700_000_000_000 + seq, prevHash: prev };
            const hash = v1Hash(e);
            await sqlStore.db
              .insertInto('approval_audit')
              .values({
                tenant_id: e.tenantId,
                seq,
                thread_id: e.threadId,
                run_id: e.runId,
                tool_call_id: e.toolCallId,
                tool_name: e.toolName,
                args_sha256: e.argsSha256,
                decision: e.decision,
                reason: e.reason,
                rule: e.rule,
                risk_level: e.riskLevel,
                decided_by: e.decidedBy,
                comment: e.comment,
                created_at: e.createdAtMs,
                prev_hash: prev,
                hash,
              })
              .execute();
            prev = hash;
          }
          await sqlStore.db.insertInto('approval_audit_heads').values({ tenant_id: tenant, seq: 2, hash: prev }).execute();

          await old.migrate();
          const migrated = await old.listAuditEntries(tenant);
          expect(migrated.map((e) => [e.approverTenantId, e.approverKeyId])).toEqual([
            ['', ''],
            ['', ''],
          ]);
          expect(verifyAuditChain(migrated, await old.getAuditHead(tenant))).toBeUndefined();
          const { entry: third } = await old.appendAuditEntry(entry(tenant, 3, { approverTenantId: tenant, approverKeyId: 'key_0123456789ab' }));
          expect([third.seq, third.prevHash]).toEqual([3, prev]);
          expect(verifyAuditChain(await old.listAuditEntries(tenant), await old.getAuditHead(tenant))).toBeUndefined();
        } finally {
          await old.close();
          await fresh.drop();
        }
      });
    });
  });
  lifecycleContract(harness);
  admissionStampContract(harness);
  takeContract(harness);
  assistantsContract(harness);
  // Crons (issue 12)
  cronsContract(harness);
  // Store items (issue 12)
  storeItemsContract(harness);
  tokenUsageContract(harness);
  // Ops console (issue 16)
  consoleContract(harness);
  // Record and replay (issue 17)
  recordingsContract(harness);
}
