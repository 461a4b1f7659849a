import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, RemoveMessage } from '@langchain/core/messages';
import { ScriptedChatModel } from '../../models/scripted.js';
import { config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import { compactNode } from './compact.js';

describe('compact node, alone', () => {
  it('answers that there is nothing to compact before any conversation', async () => {
    const out = await compactNode(runContextOf(fakeCtx()), sharedEn())(stateOf([new HumanMessage('/compact')]), config);
    expect(out.messages.map((m) => m.content)).toEqual([sharedEn().texts.nothingToCompact]);
  });

  it('replaces the history with a summary, calling the model outside the CPU slot', async () => {
    let idled = 0;
    const ctx = fakeCtx({ stepLease: { idle: async (f) => (idled++, f()) } }, new ScriptedChatModel([{ content: 'they said hi' }]));
    const out = await compactNode(runContextOf(ctx), sharedEn())(
      stateOf([new HumanMessage('hi'), new AIMessage('hello'), new HumanMessage('/compact')]),
      config,
    );
    expect(idled).toBe(1);
    expect(RemoveMessage.isInstance(out.messages[0])).toBe(true);
    expect(out.messages.some((m) => String(m.content).includes('they said hi'))).toBe(true);
    expect((out as { run_usage?: { model_calls: number } }).run_usage?.model_calls).toBe(1);
  });
});
