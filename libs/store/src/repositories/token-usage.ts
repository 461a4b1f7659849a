/**
 * The usage ledger (issue 17): tokens and model calls per (tenant, UTC day, model). A model call
 * adds to its row with one upsert-increment statement, so recording costs one round trip and
 * concurrent workers never lose an increment (the database adds, not the caller).
 */
import { sql, type Selectable } from 'kysely';
import { InvalidArgumentError } from '@agentloop/core';
import type { TokenUsageTable } from '../schema.js';
import type { TokenUsageIncrement, TokenUsageRow, TokenUsageSoFar } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId } from './rows.js';
import { preparedQuery, type PreparedQuery } from '../prepared-query.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function checkDay(field: string, day: string): void {
  if (!DAY.test(day)) throw new InvalidArgumentError(`${field} must be a YYYY-MM-DD date, got "${day}"`);
}

const count = (v: number): number => (Number.isFinite(v) && v > 0 ? Math.round(v) : 0);

function toRow(r: Selectable<TokenUsageTable>): TokenUsageRow {
  return {
    tenantId: r.tenant_id,
    day: r.day,
    model: r.model,
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    totalTokens: Number(r.total_tokens),
    modelCalls: Number(r.model_calls),
    runs: Number(r.runs),
  };
}

/** What one model call adds to its row. */
interface UsageIncrement {
  tenantId: string;
  day: string;
  model: string;
  input: number;
  output: number;
  total: number;
  runs: number;
  now: number;
}

export class TokenUsageRepository {
  /** The upsert-increment, built once (prepared-query.ts): one per model call of every run. */
  private readonly upsert: PreparedQuery<UsageIncrement, unknown>;

  constructor(private readonly ctx: RepositoryContext) {
    const dialect = ctx.dialect;
    this.upsert = preparedQuery(
      (db, p: UsageIncrement) =>
        db
          .insertInto('token_usage')
          .values({
            tenant_id: p.tenantId,
            day: p.day,
            model: p.model,
            input_tokens: p.input,
            output_tokens: p.output,
            total_tokens: p.total,
            model_calls: 1,
            runs: p.runs,
            updated_at: p.now,
          })
          .$call((q) => {
            // The stored value plus this call's: the increment happens in the database.
            const inc = (column: keyof TokenUsageTable, by: number) => sql<number>`${sql.ref(`token_usage.${column}`)} + ${by}`;
            const set = {
              input_tokens: inc('input_tokens', p.input),
              output_tokens: inc('output_tokens', p.output),
              total_tokens: inc('total_tokens', p.total),
              model_calls: inc('model_calls', 1),
              runs: inc('runs', p.runs),
              updated_at: p.now,
            };
            return dialect === 'mysql' ? q.onDuplicateKeyUpdate(set) : q.onConflict((oc) => oc.columns(['tenant_id', 'day', 'model']).doUpdateSet(set));
          }),
      // One per model call: concurrent runs' increments share commits (and the row's page).
      { groupCommit: true },
    );
  }

  /** Adds one model call's usage to its (tenant, day, model) row, creating the row when it is the first. */
  async record(u: TokenUsageIncrement): Promise<void> {
    checkId('tenantId', u.tenantId);
    checkDay('day', u.day);
    const model = u.model.slice(0, 128) || 'unknown';
    const add = { input: count(u.inputTokens), output: count(u.outputTokens), total: count(u.totalTokens), runs: u.firstCallOfRun ? 1 : 0 };
    await this.upsert.execute(this.ctx.db, { tenantId: u.tenantId, day: u.day, model, ...add, now: this.ctx.now() });
  }

  /** Total tokens of the tenant on `day` and from `monthStart` through `day`: one range read of the key. */
  async soFar(tenantId: string, day: string, monthStart: string): Promise<TokenUsageSoFar> {
    checkDay('day', day);
    checkDay('monthStart', monthStart);
    const row = await this.ctx.db
      .selectFrom('token_usage')
      .select([
        sql<number | string | null>`sum(total_tokens)`.as('month'),
        sql<number | string | null>`sum(case when day = ${day} then total_tokens else 0 end)`.as('today'),
      ])
      .where('tenant_id', '=', tenantId)
      .where('day', '>=', monthStart)
      .where('day', '<=', day)
      .executeTakeFirst();
    return { day: Number(row?.today ?? 0), month: Number(row?.month ?? 0) };
  }

  /** The tenant's rows from `from` through `to` (inclusive days), by day then model. */
  async rows(tenantId: string, from: string, to: string): Promise<TokenUsageRow[]> {
    checkDay('from', from);
    checkDay('to', to);
    const rows = await this.ctx.db
      .selectFrom('token_usage')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .orderBy('day')
      .orderBy('model')
      .execute();
    return rows.map(toRow);
  }

  /** Every tenant's rows in the range: for an operator's (admin) report only. */
  async rowsOfAllTenants(from: string, to: string): Promise<TokenUsageRow[]> {
    checkDay('from', from);
    checkDay('to', to);
    const rows = await this.ctx.db
      .selectFrom('token_usage')
      .selectAll()
      .where('day', '>=', from)
      .where('day', '<=', to)
      .orderBy('tenant_id')
      .orderBy('day')
      .orderBy('model')
      .execute();
    return rows.map(toRow);
  }
}
