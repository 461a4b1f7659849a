/** `POST /runs/batch` (the SDK's `runs.createBatch`): several stateless background runs at once. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RouteContext } from '../context.js';
import { ApiError, RequestValidationError } from '../errors.js';
import { RunCreateBody } from '../run-schema.js';
import { toApiRun } from '../serialize.js';
import { parseRequest } from '../validation.js';

/** Most payloads in one batch. */
export const MAX_BATCH = 100;

const BatchBody = z.array(RunCreateBody).min(1, 'send at least one run payload').max(MAX_BATCH, `at most ${MAX_BATCH} run payloads per batch`);

/**
 * The SDK's `createBatch` sends each payload as the caller wrote it, with only `assistantId`
 * renamed: `onCompletion`, `streamMode`, `afterSeconds`... arrive camelCased. They are taken as
 * their snake_case field (unless that is given too), so the batch means what the caller asked.
 */
function snakeCaseKeys(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  const out: Record<string, unknown> = { ...(payload as Record<string, unknown>) };
  for (const [key, value] of Object.entries(payload)) {
    if (!/[A-Z]/.test(key)) continue;
    const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    delete out[key];
    if (!(snake in out)) out[snake] = value;
  }
  return out;
}

/** An error about one payload of the batch, naming its index (`body.2.webhook`). */
function ofPayload(index: number, err: unknown): unknown {
  if (err instanceof RequestValidationError) {
    return new RequestValidationError(err.issues.map((i) => ({ ...i, path: i.path.replace(/^body/, `body.${index}`) })));
  }
  if (err instanceof ApiError) return new ApiError(err.code, `body.${index}: ${err.message}`);
  return err;
}

export function registerRunBatchRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { runs } = ctx;

  // Every payload is checked (schema, assistant, webhook, quota) before any run is created, so a
  // bad one creates nothing; the runs are then created in order, each on its temporary thread.
  app.post('/runs/batch', async (request) => {
    const payloads = parseRequest(BatchBody, Array.isArray(request.body) ? request.body.map(snakeCaseKeys) : request.body, 'body');
    for (const [i, p] of payloads.entries()) {
      try {
        await runs.validate(request.tenantId, p);
      } catch (err) {
        throw ofPayload(i, err);
      }
    }
    await runs.checkBatchQuota(request.tenantId, payloads.length);
    const created = [];
    for (const [i, body] of payloads.entries()) {
      const c = await runs.create(request.tenantId, undefined, body, { apiKeyId: request.apiKeyId ?? '' }).catch((err: unknown) => {
        throw ofPayload(i, err);
      });
      if (c.deleteOnCompletion) runs.cleanupWhenDone(request.tenantId, c.run);
      created.push(toApiRun(c.run));
    }
    request.log.info({ tenant: request.tenantId, runs: created.length }, 'batch of runs created');
    return created;
  });
}
