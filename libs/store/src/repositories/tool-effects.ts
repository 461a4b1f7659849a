/**
 * The effect ledger: one row per tool call of a run, claimed before the call starts and completed
 * with its result, so a run resumed after a crash knows which side effects already happened.
 */
import type { Kysely } from 'kysely';
import { AgentLoopError } from '@agentloop/core';
import type { Database } from '../schema.js';
import type { ToolEffect, ToolEffectKey } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, isDuplicateKey, toEffect } from './rows.js';
import { preparedQuery } from '../prepared-query.js';

// The ledger's statements of every side-effecting tool call, built once (prepared-query.ts, issue 9).
const insertClaim = preparedQuery((db, p: { tenantId: string; threadId: string; runId: string; toolCallId: string; toolName: string; now: number }) =>
  db.insertInto('tool_effects').values({
    tenant_id: p.tenantId,
    thread_id: p.threadId,
    run_id: p.runId,
    tool_call_id: p.toolCallId,
    tool_name: p.toolName,
    state: 'started',
    content: null,
    is_error: 0,
    executions: 1,
    created_at: p.now,
    updated_at: p.now,
  }),
);
type Completion = { tenantId: string; runId: string; toolCallId: string; content: string; isError: number; now: number };
const completeWhere = (db: Kysely<Database>, p: Completion) =>
  db
    .updateTable('tool_effects')
    .set({ state: 'completed', content: p.content, is_error: p.isError, updated_at: p.now })
    .where('tenant_id', '=', p.tenantId)
    .where('run_id', '=', p.runId)
    .where('tool_call_id', '=', p.toolCallId)
    .where('state', '=', 'started');
const completeReturning = preparedQuery((db, p: Completion) => completeWhere(db, p).returningAll());
const complete = preparedQuery(completeWhere);
const selectEffect = preparedQuery((db, p: { tenantId: string; runId: string; toolCallId: string }) =>
  db.selectFrom('tool_effects').selectAll().where('tenant_id', '=', p.tenantId).where('run_id', '=', p.runId).where('tool_call_id', '=', p.toolCallId),
);

export class ToolEffectRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async claim(key: ToolEffectKey): Promise<{ effect: ToolEffect; created: boolean }> {
    checkId('tenantId', key.tenantId);
    checkId('threadId', key.threadId);
    checkId('runId', key.runId);
    checkId('toolCallId', key.toolCallId);
    const now = this.ctx.now();
    try {
      await insertClaim.execute(this.ctx.db, {
        tenantId: key.tenantId,
        threadId: key.threadId,
        runId: key.runId,
        toolCallId: key.toolCallId,
        toolName: key.toolName,
        now,
      });
      // Inserted: the entry is what was written; reading it back would be a statement more per call.
      const effect: ToolEffect = {
        tenantId: key.tenantId,
        threadId: key.threadId,
        runId: key.runId,
        toolCallId: key.toolCallId,
        toolName: key.toolName,
        state: 'started',
        content: null,
        isError: false,
        executions: 1,
        createdAt: new Date(now),
        updatedAt: new Date(now),
      };
      return { effect, created: true };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    // Claimed before (a re-run step): what the ledger holds decides.
    const effect = await this.get(key.tenantId, key.runId, key.toolCallId);
    if (!effect) throw new AgentLoopError('CONFLICT', `Tool call ${key.toolCallId} of run ${key.runId} belongs to another tenant`);
    return { effect, created: false };
  }

  async restart(tenantId: string, runId: string, toolCallId: string): Promise<void> {
    await this.ctx.db
      .updateTable('tool_effects')
      .set((eb) => ({ executions: eb('executions', '+', 1), updated_at: this.ctx.now() }))
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .where('tool_call_id', '=', toolCallId)
      .where('state', '=', 'started')
      .execute();
  }

  async complete(tenantId: string, runId: string, toolCallId: string, result: { content: string; isError: boolean }): Promise<ToolEffect> {
    const done: Completion = { tenantId, runId, toolCallId, content: result.content, isError: result.isError ? 1 : 0, now: this.ctx.now() };
    // SQLite returns the entry it completed (a statement less per call); MySQL, or an entry not
    // completed here (completed before, or never claimed), reads it.
    if (this.ctx.dialect === 'sqlite') {
      const row = await completeReturning.first(this.ctx.db, done);
      if (row) return toEffect(row);
    } else {
      await complete.execute(this.ctx.db, done);
    }
    const effect = await this.get(tenantId, runId, toolCallId);
    if (!effect) throw new AgentLoopError('NOT_FOUND', `Tool call ${toolCallId} of run ${runId} was never claimed`);
    return effect;
  }

  async list(tenantId: string, runId: string): Promise<ToolEffect[]> {
    const rows = await this.ctx.db
      .selectFrom('tool_effects')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .orderBy('created_at')
      .orderBy('tool_call_id')
      .execute();
    return rows.map(toEffect);
  }

  async get(tenantId: string, runId: string, toolCallId: string): Promise<ToolEffect | undefined> {
    const row = await selectEffect.first(this.ctx.db, { tenantId, runId, toolCallId });
    return row && toEffect(row);
  }
}
