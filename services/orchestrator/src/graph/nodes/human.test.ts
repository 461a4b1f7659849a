import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import { aiCalling, aloneInGraph, config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import { USER_INPUT_INTERRUPT } from '../state.js';
import { humanNode } from './human.js';

const replies = (out: { messages: ToolMessage[] }) => out.messages.map((m) => [m.tool_call_id, m.status]);

describe('human node, alone', () => {
  it('refuses ask_human in a delegated agent and in a stateless run, without suspending', () => {
    const texts = sharedEn().texts;
    const sub = humanNode(runContextOf(fakeCtx()), sharedEn())(
      stateOf([aiCalling({ name: 'ask_human', id: 'q', args: { question: 'ok?' } })], { parent_context: 'p' }),
      config,
    );
    expect(sub.messages.map((m) => m.content)).toEqual([texts.askHuman.subagent]);
    const eph = humanNode(runContextOf(fakeCtx({ ephemeral: true })), sharedEn())(
      stateOf([aiCalling({ name: 'ask_human', id: 'q', args: { question: 'ok?' } })]),
      config,
    );
    expect(replies(eph)).toEqual([['q', 'error']]);
  });

  it('refuses an empty question and skips calls already answered', () => {
    const ai = aiCalling({ name: 'ask_human', id: 'q1', args: { question: 'ok?' } }, { name: 'ask_human', id: 'q2', args: { question: ' ' } });
    const answered = new ToolMessage({ content: 'yes', tool_call_id: 'q1', name: 'ask_human' });
    const out = humanNode(runContextOf(fakeCtx()), sharedEn())(stateOf([ai, answered]), config);
    expect(replies(out)).toEqual([['q2', 'error']]);
  });

  it('asks, and turns the answer (or the default for an empty one) into the ToolMessage', async () => {
    const { graph, config: cfg } = aloneInGraph(humanNode(runContextOf(fakeCtx()), sharedEn()));
    const first = await graph.invoke(stateOf([aiCalling({ name: 'ask_human', id: 'q', args: { question: 'color?', default: 'blue' } })]), cfg);
    expect((first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toMatchObject({
      type: USER_INPUT_INTERRUPT,
      question: 'color?',
      default: 'blue',
      required: true,
    });
    const out = await graph.invoke(new Command({ resume: { answer: '' } }), cfg);
    expect(out.messages.at(-1)).toMatchObject({ content: 'blue', tool_call_id: 'q' });
  });
});
