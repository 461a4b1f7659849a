/**
 * Run recordings (issue 17): the model calls and tool calls of a run, one row per event, read back
 * in order for export and replay. A model call's request may be stored compactly (its tools as a
 * stored tool set, its messages as a delta of an earlier call: `recording-storage.ts`, issue 9);
 * `list` expands it, so readers see full requests. Every statement is scoped by tenant.
 */
import { InvalidArgumentError } from '@agentloop/core';
import { preparedQuery } from '../prepared-query.js';
import { expandStoredRequests, STORED_REQUEST_KEY, toolsetHash, toolsetRefs, usesStoredRefs } from '../recording-storage.js';
import type { NewRecordingEvent, RecordingEvent, RecordingEventKind } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, isDuplicateKey } from './rows.js';

/** Orders events written in the same millisecond by one process (a counter, not a clock). */
const SEQ_PER_MS = 1000;

/**
 * Tool sets this process knows are stored (`tenant \0 hash`), so a run whose set is already there
 * writes nothing for it. Bounded: past this many it starts over (a forgotten set costs one ignored insert).
 */
const KNOWN_TOOLSETS_MAX = 10_000;
/** One row per model or tool call of a recorded run: built once (prepared-query.ts). */
const insertEvent = preparedQuery(
  (db, p: { tenantId: string; runId: string; key: string; seq: number; kind: string; step: number; payload: string; now: number }) =>
    db.insertInto('run_recordings').values({
      tenant_id: p.tenantId,
      run_id: p.runId,
      event_key: p.key,
      seq: p.seq,
      kind: p.kind,
      step: p.step,
      payload: p.payload,
      created_at: p.now,
    }),
  // Five per run, awaited by no reader of another connection: concurrent runs share commits.
  { groupCommit: true },
);

/** Hashes of recent tool set texts: a recorder hands the same string run after run (V8 keeps a string's own hash). */
const HASHED_TEXTS_MAX = 64;

export class RecordingRepository {
  private counter = 0;
  private readonly knownToolsets = new Set<string>();
  private readonly hashes = new Map<string, string>();

  constructor(private readonly ctx: RepositoryContext) {}

  /**
   * Writes one event; an event already written under its key (a step re-run after a crash) is kept
   * as it was. True when this call wrote the row.
   */
  async append(e: NewRecordingEvent): Promise<boolean> {
    checkId('tenantId', e.tenantId);
    checkId('runId', e.runId);
    if (!e.compact && usesStoredRefs(e)) {
      throw new InvalidArgumentError(`payload.request.${STORED_REQUEST_KEY} is reserved for recordings stored by the orchestrator`);
    }
    const now = this.ctx.now();
    this.counter = (this.counter + 1) % SEQ_PER_MS;
    try {
      await insertEvent.execute(this.ctx.db, {
        tenantId: e.tenantId,
        runId: e.runId,
        key: e.key,
        seq: now * SEQ_PER_MS + this.counter,
        kind: e.kind,
        step: e.step,
        payload: JSON.stringify(e.payload),
        now,
      });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return false;
    }
  }

  /** Stores a tool set (JSON array text) for the tenant unless it is there; returns its hash. */
  async saveToolset(tenantId: string, toolsJson: string): Promise<string> {
    checkId('tenantId', tenantId);
    let hash = this.hashes.get(toolsJson);
    if (hash === undefined) {
      hash = toolsetHash(toolsJson);
      if (this.hashes.size >= HASHED_TEXTS_MAX) this.hashes.clear();
      this.hashes.set(toolsJson, hash);
    }
    const known = `${tenantId}\0${hash}`;
    if (this.knownToolsets.has(known)) return hash;
    try {
      await this.ctx.db
        .insertInto('run_recording_toolsets')
        .values({ tenant_id: tenantId, toolset_hash: hash, tools: toolsJson, created_at: this.ctx.now() })
        .execute();
    } catch (err) {
      // Stored by another process or an earlier life of this one: same hash, same content.
      if (!isDuplicateKey(err)) throw err;
    }
    if (this.knownToolsets.size >= KNOWN_TOOLSETS_MAX) this.knownToolsets.clear();
    this.knownToolsets.add(known);
    return hash;
  }

  /** The run's events in the order they were written, requests expanded; empty when the run was not recorded (or is another tenant's). */
  async list(tenantId: string, runId: string): Promise<RecordingEvent[]> {
    const rows = await this.ctx.db
      .selectFrom('run_recordings')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .orderBy('seq')
      .execute();
    const events = rows.map((r) => ({
      runId: r.run_id,
      key: r.event_key,
      kind: r.kind as RecordingEventKind,
      step: Number(r.step),
      payload: JSON.parse(r.payload) as Record<string, unknown>,
      createdAt: new Date(Number(r.created_at)),
    }));
    const hashes = toolsetRefs(events);
    const toolsets = new Map<string, unknown[]>();
    if (hashes.length > 0) {
      const sets = await this.ctx.db
        .selectFrom('run_recording_toolsets')
        .select(['toolset_hash', 'tools'])
        .where('tenant_id', '=', tenantId)
        .where('toolset_hash', 'in', hashes)
        .execute();
      for (const s of sets) toolsets.set(s.toolset_hash, JSON.parse(s.tools) as unknown[]);
    }
    return expandStoredRequests(events, toolsets);
  }
}
