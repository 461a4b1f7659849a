import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

/**
 * LangChain's ambient run context without a LangSmith `RunTree` per call when tracing is off
 * (issue 9: "nothing built per call that can be built once", "telemetry that costs nothing when
 * it is off").
 *
 * Every runnable invoke — each graph node, router, channel write, tool — goes through
 * `AsyncLocalStorageProviderSingleton.runWithConfig`, which configures a CallbackManager from the
 * config's callbacks and, unless a LangSmith tracer is among them, constructs
 * `new RunTree({ tracingEnabled: false })` only to carry the config to code that reads it back
 * (`getRunnableConfig`: LangGraph's `interrupt()`, `getConfig()`, writers). The tree draws a
 * uuid7, formats a timestamp and reads the environment: 1.8 ms of a 24 ms run in the profile of
 * bench/throughput (README "Where the time goes"), plus the garbage.
 *
 * Installed when neither LangSmith nor LangChain tracing is enabled in the environment at start,
 * the replacement stores a plain `{ extra: { [child config key]: config } }` instead — all that
 * `getRunnableConfig` reads — and keeps the context variables of the enclosing scope, as the
 * original does. A call whose callbacks carry a LangSmith tracer still goes to the original, so
 * explicit tracing keeps working. What a disabled tree provided downstream is the same as what
 * its absence provides when tracing is off in the environment: `CallbackManager._configureSync`
 * treats a tree with `tracingEnabled: false` and no tree alike (it falls back to the environment,
 * off). Tested in langchain-context.test.ts against the original's observable behaviour.
 */

const LC_CHILD_KEY = Symbol.for('lc:child_config');
const CONTEXT_VARIABLES_KEY = Symbol.for('lc:context_variables');
const INSTALLED = Symbol.for('agentloop:light-run-context');

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;

/** Any tracing switch LangChain or LangSmith reads from the environment. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const on = (v: string | undefined) => v !== undefined && v !== '' && v.toLowerCase() !== 'false';
  return on(env.LANGSMITH_TRACING) || on(env.LANGSMITH_TRACING_V2) || on(env.LANGCHAIN_TRACING_V2) || on(env.LANGCHAIN_TRACING);
}

/** Whether `callbacks` (a handler list or a CallbackManager) has any handler to report to. */
export function hasCallbackHandlers(callbacks: unknown): boolean {
  if (!callbacks) return false;
  if (Array.isArray(callbacks)) return callbacks.length > 0;
  return (callbacks as { handlers?: unknown[] }).handlers?.length !== 0;
}

function hasTracer(callbacks: unknown): boolean {
  if (!callbacks) return false;
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks as { handlers?: unknown[] }).handlers;
  return Array.isArray(handlers) && handlers.some((h) => (h as { name?: unknown } | null)?.name === 'langchain_tracer');
}

/**
 * Replaces `runWithConfig` on LangChain's singleton (once per process; later calls are no-ops).
 * Returns whether the light context is in place.
 */
export function installLightRunContext(env: NodeJS.ProcessEnv = process.env): boolean {
  const provider = AsyncLocalStorageProviderSingleton as unknown as Record<symbol, boolean> & { runWithConfig: RunWithConfig };
  if (provider[INSTALLED]) return true;
  if (tracingRequested(env)) return false;
  const original = provider.runWithConfig.bind(AsyncLocalStorageProviderSingleton);
  const light: RunWithConfig = (config, callback, avoidCreatingRootRunTree) => {
    if (hasTracer(config?.callbacks)) return original(config, callback, avoidCreatingRootRunTree);
    const storage = AsyncLocalStorageProviderSingleton.getInstance();
    const previous = storage.getStore() as Record<symbol, unknown> | undefined;
    let store: Record<PropertyKey, unknown> | undefined = avoidCreatingRootRunTree ? undefined : { extra: { [LC_CHILD_KEY]: config } };
    if (previous !== undefined && previous[CONTEXT_VARIABLES_KEY] !== undefined) {
      store ??= {};
      store[CONTEXT_VARIABLES_KEY] = previous[CONTEXT_VARIABLES_KEY];
    }
    return storage.run(store, callback);
  };
  provider.runWithConfig = light;
  provider[INSTALLED] = true;
  return true;
}
