import { describe, expect, it } from 'vitest';
import { approvalButtons, parseApprovalPress } from './callbacks.js';

const THREAD = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('approval buttons', () => {
  it('carry the decision, the thread and the asking user, within the 64 bytes Telegram allows', () => {
    const [approve, reject] = approvalButtons(THREAD, 12345678901).inline_keyboard[0]!;
    for (const b of [approve!, reject!]) expect(Buffer.byteLength((b as { callback_data: string }).callback_data)).toBeLessThanOrEqual(64);
    expect(parseApprovalPress((approve as { callback_data: string }).callback_data)).toEqual({
      answer: { type: 'approve' },
      threadId: THREAD,
      userId: 12345678901,
    });
    expect(parseApprovalPress((reject as { callback_data: string }).callback_data)).toMatchObject({ answer: { type: 'reject' }, threadId: THREAD });
  });

  it('are not confused with other data', () => {
    expect(parseApprovalPress('ap:y:not-a-thread:1')).toBeUndefined();
    expect(parseApprovalPress(`ap:maybe:${THREAD}:1`)).toBeUndefined();
    expect(parseApprovalPress('')).toBeUndefined();
  });
});
