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

/** A JSON object (not an array, not null). */
export const JsonObjectSchema = z.record(z.string(), z.unknown());

export const Uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'expected a UUID');

export const ThreadParams = z.object({ thread_id: Uuid });
export const RunParams = z.object({ thread_id: Uuid, run_id: Uuid });

/** Query integers arrive as strings. */
export const queryInt = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);
