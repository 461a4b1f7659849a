import { RUN_CONCURRENCY_DEFAULT } from '@agentloop/orchestrator';

/**
 * Defaults the launchers (embedded and the local cluster) add to the environment, where the
 * operator has not set the variable. What they are depends on one question: is this deployment
 * shared by several tenants (AGENTLOOP_API_KEYS set) or a single user's (no keys)?
 *
 * - A single user's laptop gets the conveniences of the offline demo: the scripted model (the
 *   client picks the model's answers, i.e. drives tools directly) and webhooks to loopback (the
 *   user's own receiver).
 * - With API keys, those conveniences become attacks by one tenant on the host (issue 18): the
 *   scripted model lets any tenant call any tool with any arguments without a model in between,
 *   and loopback webhooks make the server POST to its own local ports. Neither is on unless the
 *   operator sets ALLOW_SCRIPTED_MODEL / WEBHOOK_ALLOW explicitly. Tenants also share the workers,
 *   so each gets at most half of a worker's RUN_CONCURRENCY at once (TENANT_MAX_CONCURRENT_RUNS)
 *   and at most 1,000 pending or running runs (TENANT_MAX_ACTIVE_RUNS).
 *
 * The README's security section lists these; a variable set in the environment always wins.
 */

/** The tenants-sharing-a-deployment switch: some API key is configured. */
export function hasApiKeys(env: NodeJS.ProcessEnv): boolean {
  return (env.AGENTLOOP_API_KEYS ?? '').trim() !== '';
}

/** TENANT_MAX_ACTIVE_RUNS when API keys are set: far above a normal burst, far below what exhausts a queue. */
export const MULTI_TENANT_MAX_ACTIVE_RUNS = 1000;

/** The defaults for `env`, to be spread UNDER it (`{ ...launcherDefaults(env), ...env }`). */
export function launcherDefaults(env: NodeJS.ProcessEnv, opts: { loopbackWebhooks: boolean }): NodeJS.ProcessEnv {
  if (!hasApiKeys(env)) {
    return {
      ALLOW_SCRIPTED_MODEL: 'true',
      // A laptop's own webhook receiver. WEBHOOK_ALLOW='' in the environment turns it off.
      ...(opts.loopbackWebhooks ? { WEBHOOK_ALLOW: '127.0.0.0/8,::1,localhost' } : {}),
    };
  }
  const concurrency = Number(env.RUN_CONCURRENCY ?? RUN_CONCURRENCY_DEFAULT);
  const perTenant = Number.isFinite(concurrency) && concurrency >= 2 ? Math.floor(concurrency / 2) : 1;
  return {
    TENANT_MAX_CONCURRENT_RUNS: String(perTenant),
    TENANT_MAX_ACTIVE_RUNS: String(MULTI_TENANT_MAX_ACTIVE_RUNS),
  };
}
