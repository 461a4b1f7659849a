import { describe, expect, it } from 'vitest';
import { create, DelegationSchema } from '@agentloop/proto';
import { subgraphTargets, withSubgraphEvents } from './subgraph-events.js';
import { fakeJob, log, recordingEvents } from './testing.js';

/** A job delegated by `parent` for its tool call `toolCallId`. */
const childOf = (parent: ReturnType<typeof fakeJob>, runId: string, toolCallId: string) =>
  fakeJob({
    runId,
    threadId: `thread-${runId}`,
    streamSubgraphs: parent.streamSubgraphs,
    delegation: create(DelegationSchema, { parentRunId: parent.runId, parentThreadId: parent.threadId, toolCallId, depth: 1, parentJob: parent }),
  });

/** An event stream that records the run each event was published on. */
function recordingByRun() {
  const published: Array<{ runId: string; threadId: string; event: string; data: unknown }> = [];
  return {
    published,
    async publish(runId: string, threadId: string, event: string, data: unknown) {
      published.push({ runId, threadId, event, data });
      return published.length;
    },
  };
}

describe('subgraph events of delegated runs', () => {
  it('a child of a stream_subgraphs parent also publishes its stream events there as mode|delegate:<tool call>', async () => {
    const parent = fakeJob({ runId: 'p', threadId: 'pt', streamSubgraphs: true });
    const child = childOf(parent, 'c', 'call_1');
    const events = recordingByRun();
    const publisher = withSubgraphEvents(events, child, log);
    await publisher.publish('c', 'thread-c', 'values', { messages: [] });
    await publisher.publish('c', 'thread-c', 'messages', [{ content: 'x' }, {}]);
    await publisher.publish('c', 'thread-c', 'error', { error: 'E' });
    expect(events.published).toEqual([
      { runId: 'c', threadId: 'thread-c', event: 'values', data: { messages: [] } },
      { runId: 'p', threadId: 'pt', event: 'values|delegate:call_1', data: { messages: [] } },
      { runId: 'c', threadId: 'thread-c', event: 'messages', data: [{ content: 'x' }, {}] },
      { runId: 'p', threadId: 'pt', event: 'messages|delegate:call_1', data: [{ content: 'x' }, {}] },
      { runId: 'c', threadId: 'thread-c', event: 'error', data: { error: 'E' } },
    ]);
  });

  it("a grandchild's events reach every streaming ancestor, the outermost namespace first", () => {
    const top = fakeJob({ runId: 'top', threadId: 'tt', streamSubgraphs: true });
    const child = childOf(top, 'c', 'call_a');
    const grandchild = childOf(child, 'g', 'call_b');
    expect(subgraphTargets(grandchild)).toEqual([
      { runId: 'c', threadId: 'thread-c', namespace: 'delegate:call_b' },
      { runId: 'top', threadId: 'tt', namespace: 'delegate:call_a|delegate:call_b' },
    ]);
  });

  it('without stream_subgraphs, or for a top-level run, events stay on the run', async () => {
    const parent = fakeJob({ runId: 'p', threadId: 'pt' });
    const events = recordingEvents();
    expect(withSubgraphEvents(events, childOf(parent, 'c', 'call_1'), log)).toBe(events);
    expect(withSubgraphEvents(events, fakeJob({ streamSubgraphs: true }), log)).toBe(events);
  });

  it('a copy the parent cannot take does not fail the child', async () => {
    const parent = fakeJob({ runId: 'p', threadId: 'pt', streamSubgraphs: true });
    const own: string[] = [];
    const publisher = withSubgraphEvents(
      {
        async publish(runId: string, _threadId: string, event: string) {
          if (runId === 'p') throw new Error('event log full');
          own.push(event);
          return own.length;
        },
      },
      childOf(parent, 'c', 'call_1'),
      log,
    );
    expect(await publisher.publish('c', 'thread-c', 'updates', {})).toBe(1);
    expect(own).toEqual(['updates']);
  });
});
