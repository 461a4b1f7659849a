/**
 * Run recordings (issue 17): the model calls and tool calls of a run, one row per event, read back
 * in order for export and replay. Every statement is scoped by tenant.
 */
import type { NewRecordingEvent, RecordingEvent, RecordingEventKind } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, isDuplicateKey } from './rows.js';

/** Orders events written in the same millisecond by one process (a counter, not a clock). */
const SEQ_PER_MS = 1000;

export class RecordingRepository {
  private counter = 0;

  constructor(private readonly ctx: RepositoryContext) {}

  /** Writes one event; an event already written under its key (a step re-run after a crash) is kept as it was. */
  async append(e: NewRecordingEvent): Promise<void> {
    checkId('tenantId', e.tenantId);
    checkId('runId', e.runId);
    const now = this.ctx.now();
    this.counter = (this.counter + 1) % SEQ_PER_MS;
    try {
      await this.ctx.db
        .insertInto('run_recordings')
        .values({
          tenant_id: e.tenantId,
          run_id: e.runId,
          event_key: e.key,
          seq: now * SEQ_PER_MS + this.counter,
          kind: e.kind,
          step: e.step,
          payload: JSON.stringify(e.payload),
          created_at: now,
        })
        .execute();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /** The run's events in the order they were written; empty when the run was not recorded (or is another tenant's). */
  async list(tenantId: string, runId: string): Promise<RecordingEvent[]> {
    const rows = await this.ctx.db
      .selectFrom('run_recordings')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({
      runId: r.run_id,
      key: r.event_key,
      kind: r.kind as RecordingEventKind,
      step: Number(r.step),
      payload: JSON.parse(r.payload) as Record<string, unknown>,
      createdAt: new Date(Number(r.created_at)),
    }));
  }
}
