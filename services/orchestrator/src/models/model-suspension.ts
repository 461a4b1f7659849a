/**
 * Suspending a run while its model thinks (issue 9, deliverable 3: "a run waiting on a model holds
 * no worker slot's worth of resources"; docs/adr/0010-suspend-while-the-model-thinks.md).
 *
 * A run waiting on its model used to keep its whole LangGraph invocation alive — the loop, its
 * channel copies, ~120 suspended async frames: ~97 KiB of heap per run (bench/throughput README,
 * "Memory of a run in flight"). With a ModelSuspension, the agent step's model call that has not
 * answered within the grace period ends the graph invocation instead (ModelCallSuspendedError,
 * thrown from the node: LangGraph keeps no write of the step, the previous checkpoint is where the
 * run resumes), and only the call's promise is kept here. When it settles, the executor streams the
 * graph again from the checkpoint (run/model-suspend.ts) and the agent step, running again, takes
 * the response received instead of calling the model: one call per step.
 */
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import type { AIMessage } from '@langchain/core/messages';
import { GraphDrained } from '@langchain/langgraph';

/**
 * Thrown by the agent step to end the graph invocation while its model call is pending. A
 * LangGraph `GraphDrained` ("stopped cooperatively, resumable later"): for it, unlike an ordinary
 * node error, LangGraph records no error write in the checkpoint, so the thread's history shows
 * nothing of the suspension and a resume has nothing to skip. Its name stays LangGraph's, which is
 * how LangGraph recognizes it (`isGraphDrained`).
 */
export class ModelCallSuspendedError extends GraphDrained {
  readonly code = 'model_call_suspended';
  constructor(message: string) {
    // Without a stack: V8 keeps a captured stack's frames — with their receivers, LangGraph's
    // runner and loop — until it is formatted, and the ended graph stream keeps this error as its
    // stored error: the whole invocation would stay reachable while the run is suspended.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/** Runs `wait` without holding the run's CPU slot (step-gate.ts `StepLease.idle`), or as is. */
export type Idle = <T>(wait: () => Promise<T>) => Promise<T>;

const direct: Idle = (wait) => wait();

/**
 * How many runs of this process may wait on their model inside their graph invocation past the
 * grace period (MODEL_WAITS_IN_GRAPH), shared by every run of one executor. Suspending saves a
 * waiting run's invocation (~97 KiB of heap) but costs CPU: the graph streamed again when the call
 * answers (~20% of an in-flight run's CPU; bench/throughput README). So a call pending after the
 * grace period keeps its run's invocation while fewer than `limit` runs do, and suspends only
 * beyond that: memory stays bounded by `limit` invocations however many runs wait, and a process
 * with few waiting runs pays no restarts. 0: every call pending after the grace period suspends.
 */
export class InGraphModelWaits {
  private held = 0;

  constructor(readonly limit: number) {}

  /** Runs waiting on their model inside their invocation now. */
  get count(): number {
    return this.held;
  }

  /** Takes a place if one is free. */
  tryTake(): boolean {
    if (this.held >= this.limit) return false;
    this.held++;
    return true;
  }

  release(): void {
    this.held--;
  }
}

const NO_WAITS_IN_GRAPH = new InGraphModelWaits(0);

/**
 * One run's suspension state: at most one pending model call, from the invocation it suspended
 * until the step that runs again takes it. Only given to runs whose events do not depend on the
 * invocation staying alive (run/model-suspend.ts `suspendable`).
 */
export class ModelSuspension {
  private pending: { step: string; response: Promise<AIMessage> } | undefined;

  /**
   * @param graceMs how long a model call may take before the run suspends (MODEL_SUSPEND_AFTER_MS)
   * @param inGraph the process's allowance of runs that wait past the grace period without suspending
   */
  constructor(
    readonly graceMs: number,
    private readonly inGraph: InGraphModelWaits = NO_WAITS_IN_GRAPH,
  ) {}

  /** The response the run is suspended on, while it is. */
  get waitingOn(): Promise<unknown> | undefined {
    return this.pending?.response;
  }

  /**
   * The model's answer for `step` (an identity of the step that is the same when it runs again
   * from the same checkpoint): the one received while the run was suspended, else `request()`'s.
   * Throws ModelCallSuspendedError when `request()` has not answered within the grace period and
   * the process has no in-graph wait free (InGraphModelWaits); with one, waits for the answer.
   */
  async call(step: string, request: () => Promise<AIMessage>, idle: Idle = direct): Promise<AIMessage> {
    const received = this.pending;
    this.pending = undefined;
    // Anything else would be a response for a step that no longer runs: it is dropped, and this
    // step calls the model itself (never two answers for one step).
    if (received?.step === step) return received.response;
    // Every reaction on the pending call is made outside the graph's context too: a promise keeps
    // the ambient context it was created in, and one derived from the call would keep it alive.
    const { response, answered } = detached(() => {
      const call = request();
      // Its rejection (a provider error, a cancel) is the step's, when it runs again.
      call.catch(() => undefined);
      return { response: call, answered: settlesWithin(call, this.graceMs) };
    });
    if (await idle(() => answered)) return response;
    if (this.inGraph.tryTake()) {
      try {
        await idle(() => response.then(settled, settled));
      } finally {
        this.inGraph.release();
      }
      return response;
    }
    this.pending = { step, response };
    throw new ModelCallSuspendedError(`model call of step ${step} pending after ${this.graceMs} ms; run suspended`);
  }
}

/**
 * Starts the call outside LangChain's ambient run context: a call made inside a node inherits the
 * node's config (LangGraph's loop internals, its stream's callbacks) and would keep the whole
 * invocation reachable for as long as the provider takes — exactly what suspending frees. Runs
 * that stream tokens need those callbacks, and are not suspendable.
 */
function detached<T>(request: () => T): T {
  return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, request);
}

const settled = (): void => undefined;

function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, ms, false);
  });
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}
