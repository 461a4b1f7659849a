import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/** UUIDv4, the id format the LangGraph SDK expects for threads, runs and assistants. */
export const newId = (): string => randomUUID();

/**
 * UUIDv7 (RFC 9562), increasing within this process even inside one millisecond (a dedicated
 * counter, `uuid`'s method 1): for rows listed in creation order by (created_at, id), e.g. a
 * request's uploads, whose order a random id would shuffle when they share a millisecond.
 */
export const newOrderedId = (): string => uuidv7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
