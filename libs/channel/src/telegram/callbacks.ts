import type { InlineKeyboardMarkup } from 'grammy/types';
import type { ApprovalAnswer } from '../channel.js';

/** A press of an approval button: the decision, the thread whose run waits, and who may decide. */
export interface ApprovalPress {
  answer: ApprovalAnswer;
  threadId: string;
  /** The Telegram user who sent the message that led to the approval: the only one who may answer. */
  userId: number;
}

// `ap:<y|n>:<thread id>:<user id>`: at most 5 + 36 + 1 + 20 characters, under the 64 bytes Telegram allows.
// Telegram only sends back data of buttons the bot made, so the user id in it cannot be forged.
const PATTERN = /^ap:([yn]):([0-9a-f-]{36}):(-?\d{1,20})$/;

/** The Approve / Reject buttons of an approval prompt. */
export function approvalButtons(threadId: string, userId: number): InlineKeyboardMarkup {
  return {
    inline_keyboard: [
      [
        { text: '✅ Approve', callback_data: `ap:y:${threadId}:${userId}` },
        { text: '❌ Reject', callback_data: `ap:n:${threadId}:${userId}` },
      ],
    ],
  };
}

/** The approval a button's data stands for, or undefined for data that is not one of ours. */
export function parseApprovalPress(data: string): ApprovalPress | undefined {
  const m = PATTERN.exec(data);
  if (!m) return undefined;
  const answer: ApprovalAnswer = m[1] === 'y' ? { type: 'approve' } : { type: 'reject', message: 'Rejected in Telegram.' };
  return { answer, threadId: m[2]!, userId: Number(m[3]) };
}
