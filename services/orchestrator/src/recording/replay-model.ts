/**
 * The model of a replay (issue 17): answers each call with the recorded answer of the same model
 * call index, so a replay needs no model endpoint at all. Like the scripted provider it takes the
 * index from the `scripted_turn` call option (the run's checkpointed model call count), never from
 * a counter of its own, so a replay resumed on another worker answers the same call the same way.
 */
import { BaseChatModel, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { ScriptedChatModel, type ScriptedCallOptions } from '../models/scripted.js';
import type { ResolvedModel } from '../models/registry.js';
import type { ReplaySession } from './replay-session.js';

export class ReplayChatModel extends BaseChatModel<ScriptedCallOptions> {
  constructor(
    private readonly session: Pick<ReplaySession, 'answer'>,
    params: BaseChatModelParams = {},
  ) {
    super(params);
  }

  _llmType(): string {
    return 'replay';
  }

  /** The tools offered are compared by the replay's tape (they do not change the recorded answer). */
  override bindTools(): this {
    return this;
  }

  _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const message = this.session.answer(options.scripted_turn ?? ScriptedChatModel.turnIndex(messages));
    return Promise.resolve({ generations: [{ text: message.text, message }], llmOutput: { tokenUsage: message.usage_metadata } });
  }
}

/** The resolved model of a replay run: labelled "replay" in logs, metrics and run metadata. */
export function replayModel(session: Pick<ReplaySession, 'answer'>): ResolvedModel {
  return { model: new ReplayChatModel(session), label: 'replay', provider: 'replay', modelId: 'replay' };
}
