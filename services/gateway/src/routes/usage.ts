/**
 * `GET /usage` (issue 17): token usage per tenant and model from the usage ledger, with the
 * tenant's budgets. A tenant's key reads its own usage; an operator's (a tenant listed in
 * AGENTLOOP_ADMIN_KEYS, or anyone when auth is off) reads every tenant's, or one with `tenant_id`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { usagePeriods } from '@agentloop/core';
import type { Store, TenantBudgets, TokenUsageRow } from '@agentloop/store';
import type { GatewayConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { parseRequest } from '../validation.js';
import { usageReport } from '../usage-report.js';

/** Longest range one request may ask for. */
const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

const Day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'not a calendar date');

export const UsageQuery = z
  .object({
    from: Day.optional(),
    to: Day.optional(),
    group_by: z.enum(['model', 'day']).default('model'),
    tenant_id: z.string().min(1).max(128).optional(),
  })
  .strict();

export interface UsageRouteDeps {
  store: Pick<Store, 'tokenUsageRows' | 'tokenUsageRowsOfAllTenants'>;
  budgets: TenantBudgets;
  config: Pick<GatewayConfig, 'AGENTLOOP_ADMIN_KEYS' | 'AGENTLOOP_API_KEYS'>;
  now?: () => Date;
}

/** Whether the caller is an operator: an operator key (AGENTLOOP_ADMIN_KEYS), or auth off (the one local user). */
export function isAdminCaller(request: Pick<FastifyRequest, 'isAdmin'>, config: UsageRouteDeps['config']): boolean {
  return request.isAdmin === true || (config.AGENTLOOP_API_KEYS.size === 0 && config.AGENTLOOP_ADMIN_KEYS.size === 0);
}

export function registerUsageRoutes(app: FastifyInstance, deps: UsageRouteDeps): void {
  const now = deps.now ?? (() => new Date());
  app.get('/usage', async (request) => {
    const q = parseRequest(UsageQuery, request.query, 'query');
    const today = usagePeriods(now());
    const range = { from: q.from ?? today.monthStart, to: q.to ?? today.day };
    if (range.from > range.to) throw new ApiError('INVALID_ARGUMENT', `query.from (${range.from}) is after query.to (${range.to}).`);
    if ((Date.parse(range.to) - Date.parse(range.from)) / DAY_MS + 1 > MAX_RANGE_DAYS)
      throw new ApiError('INVALID_ARGUMENT', `query.from..query.to spans more than ${MAX_RANGE_DAYS} days; ask for a shorter range.`);
    const byDay = q.group_by === 'day';
    const admin = isAdminCaller(request, deps.config);
    const report = async (tenantId: string, rows: readonly TokenUsageRow[]) =>
      usageReport(tenantId, range, rows, await deps.budgets.status(tenantId, { fresh: true }), byDay);

    if (!admin || q.tenant_id !== undefined) {
      const tenantId = q.tenant_id ?? request.tenantId;
      if (!admin && tenantId !== request.tenantId)
        throw new ApiError('PERMISSION_DENIED', `query.tenant_id: a tenant's API key reads only its own usage (tenant ${request.tenantId}).`);
      return report(tenantId, await deps.store.tokenUsageRows(tenantId, range.from, range.to));
    }
    const rows = await deps.store.tokenUsageRowsOfAllTenants(range.from, range.to);
    const byTenant = new Map<string, TokenUsageRow[]>();
    for (const r of rows) (byTenant.get(r.tenantId) ?? byTenant.set(r.tenantId, []).get(r.tenantId)!).push(r);
    return { tenants: await Promise.all([...byTenant].map(([tenantId, own]) => report(tenantId, own))) };
  });
}
