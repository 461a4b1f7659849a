import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { streamGraph, stoppedAt, currentValues, interruptNodes } from './stream.js';
import { humanInterrupts, isDelegationInterrupt, publicValues } from './values.js';
import { delegationRequest, log, recordingEvents, stateWith } from './testing.js';

const cp = { configurable: { thread_id: 't1:th1', run_id: 'r1' } };
const approval = { type: 'tool_approval', calls: [] };

/** A graph that streams `chunks` and then is at `final`; records the stream options. */
function fakeGraph(chunks: Array<[string, unknown]>, final: ReturnType<typeof stateWith>, failAfter?: number) {
  const g = {
    options: undefined as unknown,
    async stream(_input: unknown, options: unknown) {
      g.options = options;
      return (async function* () {
        for (const [i, c] of chunks.entries()) {
          if (i === failAfter) throw new Error('model failed');
          yield c;
        }
      })();
    },
    async getState() {
      return final;
    },
  };
  return g as typeof g & Parameters<typeof streamGraph>[0];
}

describe('run values', () => {
  it("publicValues keeps bookkeeping private and reports this run's and the thread's usage", () => {
    const v = publicValues(
      { messages: [], loops: 2, max_loops: 9, finalize_reason: null, context_id: 'r1', allowed_tools: [], token_usage: { input_tokens: 5 } },
      'r1',
    );
    expect(Object.keys(v).sort()).toEqual(['finalize_reason', 'loops', 'max_loops', 'messages', 'token_usage']);
    expect((v.token_usage as { thread: unknown }).thread).toEqual({ input_tokens: 5 });
    expect(publicValues(undefined, 'r1')).toEqual({});
  });

  it('a delegation is not a human interrupt, and an updates chunk of only delegations is internal', () => {
    const snapshot = stateWith({}, { interrupts: [delegationRequest(), approval] });
    expect(humanInterrupts(snapshot)).toEqual([{ id: 'i1', value: approval }]);
    expect(isDelegationInterrupt({ __interrupt__: [{ value: delegationRequest() }] })).toBe(true);
    expect(isDelegationInterrupt({ __interrupt__: [{ value: delegationRequest() }, { value: approval }] })).toBe(false);
    expect(isDelegationInterrupt({ __interrupt__: [] })).toBe(false);
    expect(isDelegationInterrupt(null)).toBe(false);
  });
});

describe('run stream', () => {
  it('stoppedAt: a delegation suspends (even with a human interrupt too), a human interrupt waits, else success', () => {
    expect(stoppedAt(stateWith({ loops: 1 }, { interrupts: [approval, delegationRequest('d7')] }), 'r1')).toMatchObject({
      kind: 'suspended',
      waiting: { delegation_id: 'd7' },
    });
    const waits = stoppedAt(stateWith({ loops: 1 }, { interrupts: [approval] }), 'r1');
    expect(waits).toMatchObject({ kind: 'waits_for_human', values: { loops: 1, __interrupt__: [{ id: 'i0', value: approval }] } });
    expect(stoppedAt(stateWith({ loops: 1 }), 'r1')).toMatchObject({ kind: 'success', values: { loops: 1 } });
  });

  it('stoppedAt: a stop with nodes still to run (interrupt_before/after) waits, without an __interrupt__', () => {
    const stopped = stoppedAt(stateWith({ loops: 1 }, { next: ['tools'] }), 'r1');
    expect(stopped).toMatchObject({ kind: 'waits_for_human', next: ['tools'] });
    expect(stopped.values).not.toHaveProperty('__interrupt__');
  });

  it('the graph gets a signal of its own, forwarded from the run signal and unhooked when the stream ends, even when it throws', async () => {
    const run = new AbortController();
    for (const failAfter of [undefined, 0]) {
      const graph = fakeGraph([['values', { messages: [] }]], stateWith({}), failAfter);
      const streamed = streamGraph(
        graph,
        recordingEvents(),
        { runId: 'r1', threadId: 'th1' },
        null,
        { cpConfig: cp, maxLoops: 1, signal: run.signal, durability: 'sync' },
        { values: null },
        log,
      );
      await streamed.catch(() => undefined);
      const given = (graph.options as { signal: AbortSignal }).signal;
      expect(given).not.toBe(run.signal);
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    }
    const graph = fakeGraph([], stateWith({}));
    const streaming = streamGraph(
      graph,
      recordingEvents(),
      { runId: 'r1', threadId: 'th1' },
      null,
      { cpConfig: cp, maxLoops: 1, signal: run.signal, durability: 'sync' },
      { values: null },
      log,
    );
    const given = (graph.options as { signal: AbortSignal } | undefined)?.signal;
    run.abort(new Error('cancelled'));
    await streaming;
    expect((given ?? (graph.options as { signal: AbortSignal }).signal).aborted).toBe(true);
  });

  it('a stream resumed after a suspension does not publish the repeated values again', async () => {
    const events = recordingEvents();
    const before = { messages: [], loops: 1 };
    const graph = fakeGraph(
      [
        ['values', before],
        ['updates', { agent: { loops: 2 } }],
        ['values', { messages: [], loops: 2 }],
      ],
      stateWith({ loops: 2 }),
    );
    await streamGraph(
      graph,
      events,
      { runId: 'r1', threadId: 'th1' },
      null,
      { cpConfig: cp, maxLoops: 2, signal: new AbortController().signal, durability: 'sync', resumed: true },
      { values: JSON.parse(JSON.stringify(publicValues(before, 'r1'))) as Record<string, never> },
      log,
    );
    expect(events.published.map((e) => e.event)).toEqual(['updates', 'values']);
  });

  it('interruptNodes: node names, "*" for every node, nothing when empty', () => {
    expect(interruptNodes(['tools'])).toEqual(['tools']);
    expect(interruptNodes(['agent', '*'])).toBe('*');
    expect(interruptNodes([])).toBeUndefined();
  });

  it('publishes values (public) and updates, skips delegation interrupts, and sets the recursion limit from max_loops', async () => {
    const events = recordingEvents();
    const graph = fakeGraph(
      [
        ['values', { messages: [], loops: 0, context_id: 'r1' }],
        ['updates', { agent: { loops: 1 } }],
        ['updates', { __interrupt__: [{ value: delegationRequest() }] }],
        ['values', { messages: [], loops: 1 }],
      ],
      stateWith({ messages: [], loops: 1 }),
    );
    const seen = { values: null };
    const signal = new AbortController().signal;
    const stopped = await streamGraph(
      graph,
      events,
      { runId: 'r1', threadId: 'th1' },
      null,
      { cpConfig: cp, maxLoops: 4, signal, durability: 'sync' },
      seen,
      log,
    );
    expect(events.published.map((e) => e.event)).toEqual(['values', 'updates', 'values']);
    expect(events.published[0]!.data).not.toHaveProperty('context_id');
    expect(seen.values).toMatchObject({ loops: 1 });
    expect(stopped.kind).toBe('success');
    expect(graph.options).toMatchObject({ ...cp, streamMode: ['values', 'updates'], recursionLimit: 42, signal, durability: 'sync' });
  });

  it('a stream that throws leaves the last published values seen', async () => {
    const seen = { values: null };
    const graph = fakeGraph(
      [
        ['values', { messages: [], loops: 3 }],
        ['updates', {}],
      ],
      stateWith({}),
      1,
    );
    await expect(
      streamGraph(
        graph,
        recordingEvents(),
        { runId: 'r1', threadId: 'th1' },
        null,
        { cpConfig: cp, maxLoops: 4, signal: new AbortController().signal, durability: 'sync' },
        seen,
        log,
      ),
    ).rejects.toThrow('model failed');
    expect(seen.values).toMatchObject({ loops: 3 });
  });

  it('currentValues is undefined when the checkpoint cannot be read', async () => {
    expect(await currentValues({ getState: async () => Promise.reject(new Error('db down')) } as never, cp, 'r1')).toBeUndefined();
    expect(await currentValues({ getState: async () => stateWith({ loops: 2 }) } as never, cp, 'r1')).toMatchObject({ loops: 2 });
  });
});
