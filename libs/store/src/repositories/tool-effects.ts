/**
 * The effect ledger: one row per tool call of a run, claimed before the call starts and completed
 * with its result, so a run resumed after a crash knows which side effects already happened.
 */
import { AgentLoopError } from '@agentloop/core';
import type { ToolEffect, ToolEffectKey } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, isDuplicateKey, toEffect } from './rows.js';

export class ToolEffectRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async claim(key: ToolEffectKey): Promise<{ effect: ToolEffect; created: boolean }> {
    checkId('tenantId', key.tenantId);
    checkId('threadId', key.threadId);
    checkId('runId', key.runId);
    checkId('toolCallId', key.toolCallId);
    const now = this.ctx.now();
    let created = true;
    try {
      await this.ctx.db
        .insertInto('tool_effects')
        .values({
          tenant_id: key.tenantId,
          thread_id: key.threadId,
          run_id: key.runId,
          tool_call_id: key.toolCallId,
          tool_name: key.toolName,
          state: 'started',
          content: null,
          is_error: 0,
          executions: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      created = false;
    }
    const effect = await this.get(key.tenantId, key.runId, key.toolCallId);
    if (!effect) throw new AgentLoopError('CONFLICT', `Tool call ${key.toolCallId} of run ${key.runId} belongs to another tenant`);
    return { effect, created };
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
    await this.ctx.db
      .updateTable('tool_effects')
      .set({ state: 'completed', content: result.content, is_error: result.isError ? 1 : 0, updated_at: this.ctx.now() })
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .where('tool_call_id', '=', toolCallId)
      .where('state', '=', 'started')
      .execute();
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
    const row = await this.ctx.db
      .selectFrom('tool_effects')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('run_id', '=', runId)
      .where('tool_call_id', '=', toolCallId)
      .executeTakeFirst();
    return row && toEffect(row);
  }
}
