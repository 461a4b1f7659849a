import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { addUsage, runUsageFor, runUsageReducer, sumUsage, threadUsageReducer, ZERO_USAGE } from './usage.js';

const ai = (i: number, o: number) => new AIMessage({ content: 'x', usage_metadata: { input_tokens: i, output_tokens: o, total_tokens: i + o } });

describe('token usage', () => {
  it('sums the usage_metadata of AI messages and ignores other messages', () => {
    expect(sumUsage([ai(10, 2), new HumanMessage('q'), ai(5, 1), new AIMessage('no usage')])).toEqual({ input_tokens: 15, output_tokens: 3, total_tokens: 18 });
  });

  it('adds thread deltas', () => {
    expect(
      threadUsageReducer(addUsage(ZERO_USAGE, { input_tokens: 1, output_tokens: 1, total_tokens: 2 }), { input_tokens: 3, output_tokens: 0, total_tokens: 3 })
        .total_tokens,
    ).toBe(5);
  });

  it('adds updates of the same run and starts over for a new run', () => {
    const r1 = runUsageReducer(
      { run_id: null, model_calls: 0, ...ZERO_USAGE },
      { run_id: 'r1', model_calls: 1, input_tokens: 4, output_tokens: 1, total_tokens: 5 },
    );
    const r1b = runUsageReducer(r1, { run_id: 'r1', model_calls: 2, input_tokens: 6, output_tokens: 2, total_tokens: 8 });
    expect(r1b).toEqual({ run_id: 'r1', model_calls: 3, input_tokens: 10, output_tokens: 3, total_tokens: 13 });
    const r2 = runUsageReducer(r1b, { run_id: 'r2', model_calls: 1, input_tokens: 1, output_tokens: 1, total_tokens: 2 });
    expect(r2).toEqual({ run_id: 'r2', model_calls: 1, input_tokens: 1, output_tokens: 1, total_tokens: 2 });
  });

  it('reports zero for a run whose counts are not in state', () => {
    expect(runUsageFor('r9', { run_id: 'r1', model_calls: 2, input_tokens: 1, output_tokens: 1, total_tokens: 2 })).toEqual({ ...ZERO_USAGE, model_calls: 0 });
  });
});
