/**
 * Tool-call ids must be unique within one AI message: approval verdicts, the effect ledger and the
 * tool-runner's replay log are all keyed by them. A model (or a hostile script driving one) that
 * gives two calls the same id — a secret-carrying write and a harmless call — would otherwise have
 * the harmless call's "allow" stand for both (issue 18). Two layers:
 *
 * - `withUniqueToolCallIds` runs on every model answer before it enters the state: a missing or
 *   repeated id gets a fresh one, so each call is approved, recorded and answered on its own.
 * - `sharedToolCallIds` is the fail-closed check for state that did not come through the model
 *   (a checkpoint written by an older version, a client's state update): calls whose id is shared
 *   are not run at all.
 */

interface HasId {
  id?: string;
}

/**
 * The calls with unique, non-empty ids: the first call keeps an id, a later call with the same id
 * (or with none) gets `<id>_dup<n>` / `call_<position>`, never colliding with another call's id.
 * Deterministic, so a step re-executed after a crash assigns the same ids. Returns the input
 * array itself when nothing had to change.
 */
export function withUniqueToolCallIds<T extends HasId>(calls: readonly T[]): { calls: T[]; changed: boolean } {
  const taken = new Set(calls.map((c) => c.id).filter((id): id is string => typeof id === 'string' && id !== ''));
  const seen = new Set<string>();
  let changed = false;
  const out = calls.map((c, i) => {
    const id = c.id ?? '';
    if (id !== '' && !seen.has(id)) {
      seen.add(id);
      return c;
    }
    changed = true;
    const stem = id === '' ? `call_${i + 1}` : `${id}_dup`;
    let fresh = id === '' ? stem : `${stem}${i + 1}`;
    for (let n = 2; taken.has(fresh) || seen.has(fresh); n++) fresh = `${stem}${i + 1}_${n}`;
    seen.add(fresh);
    taken.add(fresh);
    return { ...c, id: fresh };
  });
  return { calls: changed ? out : [...calls], changed };
}

/** Ids (including the empty id) that more than one call of the message carries. */
export function sharedToolCallIds(calls: readonly HasId[]): Set<string> {
  const seen = new Set<string>();
  const shared = new Set<string>();
  for (const c of calls) {
    const id = c.id ?? '';
    if (seen.has(id)) shared.add(id);
    seen.add(id);
  }
  return shared;
}
