import { z } from 'zod';
import { RequestValidationError } from './errors.js';

export type RequestPart = 'body' | 'query' | 'params';

/**
 * Validates one part of a request with a zod schema; a mismatch becomes a 422
 * naming each offending field (e.g. `body.assistant_id: expected string`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.infer<S> {
  const result = schema.safeParse(value ?? (part === 'body' ? {} : value));
  if (result.success) return result.data;
  throw new RequestValidationError(
    result.error.issues.map((issue) => ({
      path: [part, ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  );
}

/**
 * A JSON object (not an array, not null). Checked without walking its keys: a body comes from
 * JSON.parse, so every key is a string already, and a per-key check of a 100,000-key object
 * blocked the event loop for a quarter of a second (issue 18).
 */
export const JsonObjectSchema = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'expected a JSON object');

/** Keys a `metadata` object may have: far more than any client uses, few enough that filtering and storing it stay cheap. */
export const MAX_METADATA_KEYS = 1000;

/** Run, thread and assistant `metadata`: a JSON object of at most MAX_METADATA_KEYS keys. */
export const MetadataSchema = JsonObjectSchema.refine((v) => Object.keys(v).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`);

export const Uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'expected a UUID');

export const ThreadParams = z.object({ thread_id: Uuid });
export const RunParams = z.object({ thread_id: Uuid, run_id: Uuid });

/** Query integers arrive as strings. */
export const queryInt = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);
