import { z } from 'zod';
import { ConfigError } from './errors.js';

/**
 * Parses `env` with a zod schema once at boot. A bad value throws a ConfigError
 * naming every offending variable, e.g. "Invalid configuration: PORT: expected number".
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

/** Runs `main`; a ConfigError (or any boot failure) prints a clear message and exits 1. */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    const msg = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`${name}: failed to start\n${msg}\n`);
    process.exit(1);
  }
}

/** Env boolean: "1", "true", "yes", "on" (case-insensitive) are true; "0", "false", "no", "off", "" false. */
export const envBool = (def: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const s = v.toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: `expected a boolean (true/false), got "${v}"` });
      return z.NEVER;
    });

/** Env integer with bounds. */
export const envInt = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);
/**
 * Per-tenant integers, `acme=3,globex=1` → Map(tenant → integer in [min, max]); unset or empty: an
 * empty map. The one syntax of every per-tenant setting (TENANT_RUN_QUOTAS, TENANT_RATE_LIMITS,
 * TENANT_WEIGHTS, TENANT_CONCURRENT_RUNS, TENANT_TOKEN_BUDGETS_*); `what` names the number in errors.
 */
export const envTenantNumbers = (variable: string, min: number, max: number, what = 'integer') =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const out = new Map<string, number>();
      for (const item of (raw ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')) {
        const m = /^([A-Za-z0-9_.-]{1,64})=(\d{1,15})$/.exec(item);
        const n = m ? Number(m[2]) : NaN;
        if (!m || n < min || n > max) {
          ctx.addIssue({
            code: 'custom',
            message: `${variable}: "${item}" is not tenant=${what} with the ${what} in ${min}..${max} (e.g. acme=${Math.max(min, 2)})`,
          });
          return z.NEVER;
        }
        out.set(m[1]!, n);
      }
      return out;
    });

/** An optional integer env var within bounds (unset: undefined, the consumer's own default). */
export const envOptionalInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max).optional();

/**
 * Optional absolute http(s) URL without a trailing slash (e.g. PUBLIC_BASE_URL);
 * unset or empty: undefined.
 */
export const envBaseUrl = () =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      try {
        const u = new URL(v.trim());
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
        return u.href.replace(/\/+$/, '');
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected an absolute http(s) URL, e.g. https://agents.example.com' });
        return z.NEVER;
      }
    });

/** Shared transport settings. Empty URL means "not configured". */
export const TransportEnv = z.object({
  NATS_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  MYSQL_URL: z.string().optional(),
});
export type TransportEnv = z.infer<typeof TransportEnv>;
