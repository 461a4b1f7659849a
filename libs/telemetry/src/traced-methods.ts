import { context, failSpan, trace, tracer, tracingEnabled } from './instruments.js';

/**
 * `target` with a span around each call of its methods, named `<prefix>.<method>`: the store's
 * queries, the checkpointer's writes and the event stream's publishes show up in a run's trace
 * instead of as unexplained "own" time of the run span (issue 9: where a cluster run's wall time
 * goes). A promise's span ends when it settles (failed when it rejects), a synchronous method's
 * when it returns; generator methods are called as is, outside any span. With tracing off the
 * target itself is returned, so production pays nothing.
 */
export function tracedMethods<T extends object>(target: T, prefix: string): T {
  if (!tracingEnabled()) return target;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(obj, key, receiver) {
      const value: unknown = Reflect.get(obj, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string' || key === 'constructor') return value;
      const cached = wrapped.get(key);
      if (cached) return cached;
      const method = value as (...args: unknown[]) => unknown;
      // Called on the target itself: its own calls to its methods stay untraced, private fields keep working.
      const fn = (...args: unknown[]): unknown => {
        if (isGeneratorFunction(method)) return method.apply(obj, args);
        const parent = context.active();
        const span = tracer().startSpan(`${prefix}.${key}`, {}, parent);
        let result: unknown;
        try {
          result = context.with(trace.setSpan(parent, span), () => method.apply(obj, args));
        } catch (err) {
          failSpan(span, err);
          span.end();
          throw err;
        }
        if (result instanceof Promise) {
          return result.then(
            (value: unknown) => {
              span.end();
              return value;
            },
            (err: unknown) => {
              failSpan(span, err);
              span.end();
              throw err;
            },
          );
        }
        span.end();
        return result;
      };
      wrapped.set(key, fn);
      return fn;
    },
  });
}

function isGeneratorFunction(fn: (...args: never[]) => unknown): boolean {
  const tag = (fn as { [Symbol.toStringTag]?: string })[Symbol.toStringTag];
  return tag === 'AsyncGeneratorFunction' || tag === 'GeneratorFunction';
}
