import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
 * A random UUIDv4: for ids whose every character must be unpredictable or whose prefix is used on
 * its own (an instance name takes the first 8 characters). Threads and runs use newOrderedId.
 */
export const newId = (): string => randomUUID();

/**
 * UUIDv7 (RFC 9562), increasing within this process even inside one millisecond (a dedicated
 * counter, `uuid`'s method 1), with 74 random bits:
 * - for rows listed in creation order by (created_at, id), e.g. a request's uploads, whose order a
 *   random id would shuffle when they share a millisecond;
 * - for the threads and runs the server creates, as the open LangGraph server does (it creates both
 *   with uuid7). The b-trees keyed by a thread or run id (checkpoints and their writes, runs, run
 *   recordings, queue jobs) then take new keys at their right edge, where the runs of the same
 *   moment share a page, instead of on a random leaf each: a commit writes fewer pages
 *   (issue 9, bench/throughput/README.md "Thread and run ids in creation order").
 */
export const newOrderedId = (): string => uuidv7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
