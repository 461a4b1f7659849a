/**
 * Token accounting of the orchestrator (issue 17): every model call is written to the usage ledger
 * (one upsert-increment), and before every model call the run's own budget
 * (`configurable.max_tokens_total`) and its tenant's daily and monthly budgets are checked.
 */
import { budgetExceededMessage, errorMessage, usagePeriods, type BudgetPeriod, type Logger, type TenantBudgetStatus } from '@agentloop/core';
import type { Store, TenantBudgets } from '@agentloop/store';
import { instruments } from '@agentloop/telemetry';
import type { TokenUsage } from '../usage.js';

/** `error` of a run ended by a token budget (its error event, webhook `error_type`). */
export const TOKEN_BUDGET_EXCEEDED = 'token_budget_exceeded';

/** Why a model call is refused: which budget, its limit, what was used, and when it resets (null for a run's own budget). */
export interface BudgetStop {
  budget: BudgetPeriod | 'run';
  limit: number;
  used: number;
  resets_at: string | null;
  message: string;
}

/** Thrown before a model call a budget refuses; the node that made the call ends the run with it. */
export class TokenBudgetExceededError extends Error {
  override name = 'TokenBudgetExceededError';
  readonly code = TOKEN_BUDGET_EXCEEDED;
  constructor(readonly stop: BudgetStop) {
    super(stop.message);
  }
}

/** What a run's nodes use: the check before a call, the record after it. */
export interface RunTokenAccounting {
  /** The budget that refuses the next call, or null. `runTokens`: the run's own total so far. */
  check(runTokens: number): Promise<BudgetStop | null>;
  /** Adds a finished call to the ledger (and the metrics). */
  record(model: string, usage: TokenUsage | null, firstCallOfRun: boolean): Promise<void>;
}

export interface TokenAccountingDeps {
  store: Pick<Store, 'recordTokenUsage'>;
  /** The tenants' budgets over the ledger; absent: no tenant budget is checked. */
  budgets?: TenantBudgets;
  logger: Logger;
  now?: () => Date;
}

/** The `agentloop.tokens.budget_remaining` gauge, from a budget check's figures. */
export function recordBudgetRemaining(tenantId: string, status: Pick<TenantBudgetStatus, 'daily' | 'monthly'>): void {
  const gauge = instruments().tokenBudgetRemaining;
  for (const [budget, s] of [['daily', status.daily] as const, ['monthly', status.monthly] as const]) {
    if (s) gauge.record(Math.max(0, s.limit - s.used), { 'agentloop.tenant': tenantId, budget });
  }
}

export class TokenAccounting {
  private readonly now: () => Date;
  constructor(private readonly deps: TokenAccountingDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  forRun(tenantId: string, maxTokensTotal: number | null): RunTokenAccounting {
    return {
      check: (runTokens) => this.check(tenantId, maxTokensTotal, runTokens),
      record: (model, usage, first) => this.record(tenantId, model, usage, first),
    };
  }

  private async check(tenantId: string, maxTokensTotal: number | null, runTokens: number): Promise<BudgetStop | null> {
    if (maxTokensTotal !== null && runTokens >= maxTokensTotal) {
      return {
        budget: 'run',
        limit: maxTokensTotal,
        used: runTokens,
        resets_at: null,
        message: `This run has used its token budget: ${runTokens} of ${maxTokensTotal} tokens (config.configurable.max_tokens_total).`,
      };
    }
    if (!this.deps.budgets) return null;
    const status = await this.deps.budgets.status(tenantId);
    recordBudgetRemaining(tenantId, status);
    const { exceeded } = status;
    if (!exceeded) return null;
    return {
      budget: exceeded.budget,
      limit: exceeded.limit,
      used: exceeded.used,
      resets_at: exceeded.resets_at,
      message: budgetExceededMessage(tenantId, exceeded),
    };
  }

  private async record(tenantId: string, model: string, usage: TokenUsage | null, firstCallOfRun: boolean): Promise<void> {
    const u = usage ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    const attrs = { 'gen_ai.request.model': model, 'agentloop.tenant': tenantId };
    const metrics = instruments();
    metrics.tokens.add(u.input_tokens, { ...attrs, 'gen_ai.token.type': 'input' });
    metrics.tokens.add(u.output_tokens, { ...attrs, 'gen_ai.token.type': 'output' });
    try {
      await this.deps.store.recordTokenUsage({
        tenantId,
        day: usagePeriods(this.now()).day,
        model,
        inputTokens: u.input_tokens,
        outputTokens: u.output_tokens,
        totalTokens: u.total_tokens,
        firstCallOfRun,
      });
      this.deps.budgets?.noteUsage(tenantId, u.total_tokens);
    } catch (err) {
      // The call is made and its answer is in hand: failing the run now would pay for the call
      // twice on retry. The ledger misses this call; the log says so.
      this.deps.logger.error({ err: errorMessage(err), tenant: tenantId, model, usage: u }, 'token usage not recorded in the ledger');
    }
  }
}
