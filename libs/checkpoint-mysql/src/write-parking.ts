/**
 * A task's pending writes held back until the thread's next put, so that they travel in its round
 * trip (issue 9: one MariaDB round trip per step instead of putWrites then put,
 * bench/throughput/README.md "Checkpoint writes in one round trip per step").
 *
 * LangGraph calls putWrites when a task finishes and put once the step's tasks are all done,
 * without awaiting the writes first; with durability "sync" it awaits both before the next step.
 * A parked write waits until the event loop's check phase (setImmediate) — or, when a put of its
 * thread is in flight then, until the check phase after that put settled: LangGraph makes a step's
 * put only once the previous put is stored, so the first step's writes (made while the input's
 * checkpoint was still being written) would otherwise always go alone. If no put of its thread
 * took it by then (an interrupt, a step whose other tasks still run, a put waiting for this very
 * write), it goes out on its own. Its promise settles only once it is stored, so LangGraph's
 * wait for the step's writes still means "in the database", and a crash before that loses what a
 * crash before a putWrites always lost: the task runs again when the step is resumed.
 */
import type { Statement } from './put-statements.js';

interface Parked {
  statement: Statement;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class WriteParking {
  private readonly byKey = new Map<string, Parked[]>();
  /** Puts sent and not yet settled, by key. */
  private readonly putsInFlight = new Map<string, number>();
  /** Parked lists whose check phase came while a put of their key was in flight. */
  private readonly afterPut = new Set<Parked[]>();

  /** `send` stores writes no put took in time, in the order given. */
  constructor(private readonly send: (statements: Statement[]) => Promise<void>) {}

  /** Holds `statement` for the next put of `key` (thread and namespace); resolves once it is stored. */
  park(key: string, statement: Statement): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let list = this.byKey.get(key);
      if (!list) {
        const fresh: Parked[] = [];
        this.byKey.set(key, fresh);
        setImmediate(() => this.flush(key, fresh));
        list = fresh;
      }
      list.push({ statement, resolve, reject });
    });
  }

  /**
   * The statements parked for `key`, now the caller's to send first: `sent` settles their promises
   * with the outcome of the round trip that carries them.
   */
  take(key: string): { statements: Statement[]; sent: (outcome: Promise<void>) => Promise<void> } {
    const list = this.byKey.get(key) ?? [];
    this.byKey.delete(key);
    this.putsInFlight.set(key, (this.putsInFlight.get(key) ?? 0) + 1);
    return {
      statements: list.map((p) => p.statement),
      sent: (outcome) => {
        const done = () => this.putSettled(key);
        outcome.then(done, done);
        return settle(list, outcome);
      },
    };
  }

  /** Sends every parked write now (before the pool closes). */
  async flushAll(): Promise<void> {
    const lists = [...this.byKey];
    this.byKey.clear();
    this.afterPut.clear();
    await Promise.allSettled(lists.map(([, list]) => settle(list, this.send(list.map((p) => p.statement)))));
  }

  private putSettled(key: string): void {
    const n = (this.putsInFlight.get(key) ?? 1) - 1;
    if (n > 0) {
      this.putsInFlight.set(key, n);
      return;
    }
    this.putsInFlight.delete(key);
    const list = this.byKey.get(key);
    if (list && this.afterPut.delete(list)) setImmediate(() => this.flush(key, list));
  }

  private flush(key: string, list: Parked[]): void {
    if (this.byKey.get(key) !== list) return; // a put took them
    if (this.putsInFlight.has(key)) {
      // The thread's next put usually follows this one at once: give it the check phase after.
      this.afterPut.add(list);
      return;
    }
    this.byKey.delete(key);
    void settle(list, this.send(list.map((p) => p.statement)));
  }
}

/** Settles each parked write with `outcome`, and returns `outcome` for the caller to await. */
function settle(list: readonly Parked[], outcome: Promise<void>): Promise<void> {
  if (list.length === 0) return outcome;
  outcome.then(
    () => list.forEach((p) => p.resolve()),
    (err: unknown) => list.forEach((p) => p.reject(err)),
  );
  return outcome;
}
