import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { aiCalling, config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import { finalizeNode } from './finalize.js';

describe('finalize node, alone', () => {
  const node = finalizeNode(runContextOf(fakeCtx()), sharedEn());

  it('does nothing when the model finished by itself', async () => {
    expect(await node(stateOf([new HumanMessage('hi'), new AIMessage('bye')]), config)).toEqual({ finalize_reason: null });
  });

  it('answers the pending calls and explains the loop limit', async () => {
    const out = await node(stateOf([aiCalling({ name: 'echo', id: 'a' }, { name: 'echo', id: 'b' })], { loops: 3, max_loops: 3 }), config);
    expect(out.finalize_reason).toBe('loop_limit');
    const msgs = (out as { messages: Array<ToolMessage | AIMessage> }).messages;
    expect(msgs.slice(0, 2).map((m) => (m as ToolMessage).tool_call_id)).toEqual(['a', 'b']);
    expect(msgs[2]!.content).toBe(sharedEn().texts.loopLimit(3));
  });

  it('names a thrice-repeated call', async () => {
    const call = () => aiCalling({ name: 'echo', id: 'a', args: { x: 1 } });
    const done = () => new ToolMessage({ content: 'r', tool_call_id: 'a' });
    const out = await node(stateOf([call(), done(), call(), done(), call()], { loops: 3 }), config);
    expect(out.finalize_reason).toBe('repeated_tool_call');
  });
});
