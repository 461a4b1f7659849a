/**
 * A conditional edge's path function as a runnable that calls the function directly when nobody
 * listens to the run's callbacks (issue 9: "nothing built per call that can be built once").
 *
 * `addConditionalEdges(source, fn)` wraps a plain function in a `RunnableLambda`, whose every
 * invoke configures a CallbackManager, reports chain start/end to it, patches the config and runs
 * the function inside LangChain's async context: ~0.1 ms of main-thread CPU per 3-step run in the
 * bench/throughput profile, for six routers whose whole work is reading a few state keys. Our
 * routers are pure functions of the state: they read no config, call no runnable and emit nothing,
 * so the context and the callbacks have nothing to carry for them.
 *
 * When the config carries callback handlers (the `events` stream mode's, LangGraph's `messages`
 * streamer, a LangSmith tracer enabled in the environment), the call goes through the same
 * `RunnableLambda` as before, so what those handlers see is unchanged. The branch keeps the name
 * LangGraph gives a plain function's (`condition`), so the compiled graph is the same.
 */
import { Runnable, RunnableLambda, type RunnableConfig } from '@langchain/core/runnables';
import { hasCallbackHandlers } from '../langchain-context.js';

export class Router<S, R> extends Runnable<S, R> {
  lc_namespace = ['agentloop', 'graph'];
  private readonly traced: RunnableLambda<S, R>;

  constructor(private readonly route: (state: S) => R) {
    super();
    // LangGraph names a branch after its path, and a plain function's branch `condition`.
    this.name = 'condition';
    this.traced = RunnableLambda.from(route);
  }

  override invoke(input: S, options?: Partial<RunnableConfig>): Promise<R> {
    if (hasCallbackHandlers(options?.callbacks)) return this.traced.invoke(input, options);
    try {
      return Promise.resolve(this.route(input));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
}

/** `fn` as a conditional edge's path (see above). */
export const router = <S, R>(fn: (state: S) => R): Router<S, R> => new Router(fn);
