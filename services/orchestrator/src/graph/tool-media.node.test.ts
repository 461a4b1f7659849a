/**
 * A tool result's media through the tools node and the run recording (issue 14): kept in the
 * ToolMessage for a run that has a model taking them (through the effect ledger too), text only
 * otherwise; recorded as a digest, not base64.
 */
import { describe, expect, it } from 'vitest';
import type { Command } from '@langchain/langgraph';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ToolEffect } from '@agentloop/store';
import type { ToolCallInput, ToolCallResult } from '../tool-client.js';
import { recordMessages, mediaDigest } from '../recording/format.js';
import { aiCalling, config, fakeCtx, runContextOf, sharedEn, stateOf } from './testing.js';
import { toolsNode, type ToolsDeps } from './nodes/tools.js';

const PNG = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
const TEXT = '[image saved to outputs/mcp/s-pic-1.png (image/png, 8 bytes)]';

const tools = {
  async listTools() {
    return [];
  },
  async execute(call: ToolCallInput): Promise<ToolCallResult> {
    void call;
    return { content: TEXT, isError: false, media: [{ kind: 'image', mimeType: 'image/png', base64: PNG, savedPath: 'outputs/mcp/s-pic-1.png' }] };
  },
  isIdempotent: () => false,
};

/** A ledger keeping text only, like the store's. */
function ledger() {
  const effects = new Map<string, ToolEffect>();
  return {
    async claimToolEffect(key: { tenantId: string; threadId: string; runId: string; toolCallId: string; toolName: string }) {
      const effect: ToolEffect = { ...key, state: 'started', content: null, isError: false, executions: 1, createdAt: new Date(), updatedAt: new Date() };
      effects.set(key.toolCallId, effect);
      return { effect, created: true };
    },
    async restartToolEffect() {},
    async completeToolEffect(_t: string, _r: string, id: string, result: { content: string; isError: boolean }) {
      return Object.assign(effects.get(id)!, { state: 'completed', ...result });
    },
  };
}

const vision = { images: true, audio: false };
const router = { configured: new Set(['base', 'vision'] as const), forSlot: () => ({ ...fakeCtx().model, accepts: vision }) };

async function toolMessage(withRouter: boolean): Promise<ToolMessage> {
  const ctx = fakeCtx(withRouter ? { router } : {});
  const node = toolsNode({ ...runContextOf(ctx), tools, ledger: ledger() } as unknown as ToolsDeps, sharedEn());
  const out = (await node(stateOf([new HumanMessage('go'), aiCalling({ name: 'mcp_pic', id: 'p1' })]), config)) as Command;
  return (out.update as { messages: ToolMessage[] }).messages[0]!;
}

describe('tools node with a result carrying an image', () => {
  it('keeps the image in the ToolMessage when a slot of the run takes images (through the effect ledger)', async () => {
    const m = await toolMessage(true);
    expect(m.content).toEqual([
      { type: 'text', text: TEXT },
      { type: 'image', source_type: 'base64', mime_type: 'image/png', data: PNG, metadata: { saved_path: 'outputs/mcp/s-pic-1.png' } },
    ]);
  });

  it('keeps the text only for a text-only run (the scripted model)', async () => {
    expect((await toolMessage(false)).content).toBe(TEXT);
  });

  it('records the image by its digest, not its base64', async () => {
    const [recorded] = recordMessages([await toolMessage(true)]);
    expect(recorded!.content).toEqual([
      { type: 'text', text: TEXT },
      { type: 'image', source_type: 'base64', mime_type: 'image/png', data: mediaDigest(PNG), metadata: { saved_path: 'outputs/mcp/s-pic-1.png' } },
    ]);
    expect(mediaDigest(PNG)).toMatch(/^sha256:[0-9a-f]{64}, 12 base64 characters$/);
  });
});
