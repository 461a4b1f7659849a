import { afterEach, describe, expect, it, vi } from 'vitest';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { CallbackManager } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import { silentLogger } from '@agentloop/core';
import { withToolEvents } from './tool-events.js';

class Recorder extends BaseCallbackHandler {
  name = 'recorder';
  seen: string[] = [];
  override handleToolStart(
    _tool: unknown,
    input: string,
    _runId: string,
    _parent?: string,
    _tags?: string[],
    _meta?: Record<string, unknown>,
    name?: string,
    toolCallId?: string,
  ) {
    this.seen.push(`start ${name} ${toolCallId} ${input}`);
  }
  override handleToolEvent(chunk: unknown) {
    this.seen.push(`event ${JSON.stringify(chunk)}`);
  }
  override handleToolEnd(output: unknown) {
    this.seen.push(`end ${(output as ToolMessage).content as string}`);
  }
}

const call = { id: 'c1', name: 'now', args: { tz: 'UTC' } };
const answer = (emit: (d: Record<string, unknown>) => void) => {
  emit({ progress: 1 });
  return Promise.resolve(new ToolMessage({ content: 'noon', tool_call_id: 'c1' }));
};

afterEach(() => vi.restoreAllMocks());

describe('withToolEvents', () => {
  it('reports start, progress and end to the run callbacks', async () => {
    const h = new Recorder();
    const m = await withToolEvents({ callbacks: [h] }, call, silentLogger(), answer);
    expect(m.content).toBe('noon');
    expect(h.seen).toEqual(['start now c1 {"tz":"UTC"}', 'event {"progress":1}', 'end noon']);
  });

  it('with no handler runs the call without configuring a callback manager', async () => {
    const configure = vi.spyOn(CallbackManager, '_configureSync');
    const m = await withToolEvents({}, call, silentLogger(), answer);
    expect(m.content).toBe('noon');
    expect((await withToolEvents({ callbacks: new CallbackManager() }, call, silentLogger(), answer)).content).toBe('noon');
    expect(configure).not.toHaveBeenCalled();
  });
});
