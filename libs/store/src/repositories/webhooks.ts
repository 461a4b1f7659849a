/** The delivery log of run webhooks: one row per attempt, written by the orchestrator's deliverer. */
import type { WebhookAttempt } from '../types.js';
import type { RepositoryContext } from './context.js';
import { isDuplicateKey, toWebhookAttempt } from './rows.js';

export class WebhookRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async recordAttempt(a: WebhookAttempt): Promise<void> {
    try {
      await this.ctx.db
        .insertInto('webhook_deliveries')
        .values({
          tenant_id: a.tenantId,
          delivery_id: a.deliveryId,
          run_id: a.runId,
          attempt: a.attempt,
          at: a.at.getTime(),
          outcome: a.outcome,
          status_code: a.statusCode,
          error: a.error === null ? null : a.error.slice(0, 4000),
          duration_ms: Math.max(0, Math.round(a.durationMs)),
        })
        .execute();
    } catch (err) {
      // The same attempt recorded twice: the first one stands (see `Store.recordWebhookAttempt`).
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async listAttempts(tenantId: string, deliveryId: string): Promise<WebhookAttempt[]> {
    const rows = await this.ctx.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('delivery_id', '=', deliveryId)
      .orderBy('attempt')
      .execute();
    return rows.map(toWebhookAttempt);
  }
}
