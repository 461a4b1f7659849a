import { randomUUID } from 'node:crypto';

/** UUIDv4, the id format the LangGraph SDK expects for threads, runs and assistants. */
export const newId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
