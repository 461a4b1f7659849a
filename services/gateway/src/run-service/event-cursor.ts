/** Following one run's event log: a subscription started before the Store is read, and the error events it carries. */
import type { RunEventStream, StoredRunEvent } from '@agentloop/bus';
import type { RunRecord } from '@agentloop/store';

/** `{error, message}` as LangGraph reports a failed run (`__error__` in /wait, the `error` SSE event). */
export interface RunErrorInfo {
  error: string;
  message: string;
}

export function errorFromRecord(run: RunRecord): RunErrorInfo | undefined {
  if (run.status === 'error') return { error: 'Error', message: run.error ?? 'The run failed.' };
  if (run.status === 'timeout') return { error: 'TimeoutError', message: run.error ?? 'The run exceeded its time limit.' };
  return undefined;
}

export function parseErrorEvent(dataJson: string): RunErrorInfo {
  try {
    const v = JSON.parse(dataJson) as { error?: unknown; message?: unknown } | null;
    return {
      error: typeof v?.error === 'string' ? v.error : 'Error',
      message: typeof v?.message === 'string' ? v.message : dataJson,
    };
  } catch {
    return { error: 'Error', message: dataJson };
  }
}

/** The abort reason of a closed cursor's subscription (nothing reads it; see EventCursor.close). */
const CURSOR_CLOSED = Object.freeze({ name: 'CursorClosed', message: 'event cursor closed' });

/**
 * A started subscription to one run's events. Created before the Store check
 * so nothing published meanwhile is missed; `next` resolves undefined when the
 * stream ends or the signal aborts, 'idle' after `idleMs` without an event.
 */
export class EventCursor {
  private readonly ac = new AbortController();
  private readonly it: AsyncIterator<StoredRunEvent>;
  private pending: Promise<IteratorResult<StoredRunEvent>> | undefined;
  private readonly onOuterAbort = () => this.ac.abort();
  /** Id of the last event this cursor returned; undefined before the first. */
  lastId: number | undefined;

  constructor(
    events: RunEventStream,
    private readonly runId: string,
    afterId: number,
    private readonly outer: AbortSignal,
  ) {
    if (outer.aborted) this.ac.abort();
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
    this.it = events.subscribe(runId, { afterId, signal: this.ac.signal })[Symbol.asyncIterator]();
    this.pending = this.pull();
  }

  async next(idleMs?: number): Promise<StoredRunEvent | 'idle' | undefined> {
    if (this.ac.signal.aborted) return undefined;
    const p = this.pending ?? this.pull();
    this.pending = p;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<'idle' | 'aborted'>((resolve) => {
      onAbort = () => resolve('aborted');
      this.ac.signal.addEventListener('abort', onAbort, { once: true });
      if (idleMs !== undefined) timer = setTimeout(() => resolve('idle'), idleMs);
    });
    try {
      const r = await Promise.race([p, stop]);
      if (r === 'aborted') return undefined;
      if (r === 'idle') return 'idle';
      this.pending = undefined;
      if (r.done) return undefined;
      this.lastId = r.value.id;
      return r.value;
    } catch (err) {
      this.pending = undefined;
      if (this.ac.signal.aborted) return undefined;
      throw err;
    } finally {
      if (timer) clearTimeout(timer);
      if (onAbort) this.ac.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Whether the cursor was closed or its signal aborted. */
  get aborted(): boolean {
    return this.ac.signal.aborted;
  }

  /** A new cursor on the same run and signal, from after event `afterId` (a subscription ends at an `end`). */
  follow(events: RunEventStream, afterId: number): EventCursor {
    return new EventCursor(events, this.runId, afterId, this.outer);
  }

  close(): void {
    // A reason given: abort() without one builds a DOMException (a stack trace) for every wait.
    this.ac.abort(CURSOR_CLOSED);
    this.outer.removeEventListener('abort', this.onOuterAbort);
    this.pending = undefined;
    void Promise.resolve()
      .then(() => this.it.return?.())
      .catch(() => undefined);
  }

  private pull(): Promise<IteratorResult<StoredRunEvent>> {
    const p = this.it.next();
    p.catch(() => undefined);
    return p;
  }
}
