/**
 * Start-time fair queueing (SFQ, Goyal et al. 1996) across the groups (tenants) of one queue —
 * the arithmetic both backends share; docs/adr/0008-fair-scheduling.md says how it is used.
 *
 * Each job gets a virtual start tag when it is enqueued: `S = max(V, F[group])`, and its group's
 * finish tag moves on to `F[group] = S + 1 / weight`. V is the virtual time: the largest tag of a
 * job a worker has started. Workers take jobs in tag order (FIFO among equal tags). A group that
 * enqueues 2,000 jobs gets tags V, V+1, … V+1999; a group idle until now gets V and is next.
 */
/** How jobs of one queue are shared among groups: a weight per group (default `defaultWeight`, 1). */
export interface FairnessOptions {
  weights: ReadonlyMap<string, number>;
  defaultWeight?: number;
}

/** Largest weight: 1/weight must stay at least one priority step (PRIORITY_SCALE). */
export const MAX_WEIGHT = 100;
/** BullMQ priorities are integers 1..2^21 - 1, lower first (0 is "no priority", taken before all others). */
export const MAX_PRIORITY = 2 ** 21 - 1;
/** Priority steps per unit of virtual time. */
export const PRIORITY_SCALE = MAX_WEIGHT;
/**
 * Virtual time that may pass after a priority base before the priorities are rebased: half of the
 * priority range, so a job tagged up to REBASE_AFTER ahead of V still gets an exact priority.
 */
export const REBASE_AFTER = Math.floor((MAX_PRIORITY + 1) / 2 / PRIORITY_SCALE);

export function weightOf(fairness: FairnessOptions, group: string): number {
  return fairness.weights.get(group) ?? fairness.defaultWeight ?? 1;
}

/** The tag of a job enqueued now by a group whose last finish tag is `finish` (undefined: never seen). */
export function startTag(virtualTime: number, finish: number | undefined): number {
  return Math.max(virtualTime, finish ?? 0);
}

/** The group's finish tag after a job tagged `start`: its next job is tagged no earlier. */
export function finishTag(start: number, weight: number): number {
  if (!(weight > 0)) throw new RangeError(`weight must be > 0, got ${weight}`);
  return start + 1 / weight;
}

/** The virtual time once a job tagged `tag` starts: it never goes back (a retried old job leaves it). */
export function advance(virtualTime: number, tag: number): number {
  return Math.max(virtualTime, tag);
}

/**
 * The BullMQ priority of a tag relative to the priority base (the virtual time at the last rebase).
 * Tags beyond the range share the last priority (FIFO among themselves, behind every other job)
 * until a rebase gives them their exact place; a tag below the base (a job older than the rebase
 * whose priority was not rewritten yet) takes the first.
 */
export function priorityOf(tag: number, base: number): number {
  const p = Math.floor((tag - base) * PRIORITY_SCALE) + 1;
  return Math.min(MAX_PRIORITY, Math.max(1, p));
}

/** True when V has moved so far past the base that new tags would soon leave the priority range. */
export function needsRebase(virtualTime: number, base: number): boolean {
  return virtualTime - base > REBASE_AFTER;
}
