/**
 * An MCP server's `sampling/createMessage` relayed to the orchestrators (libs/bus sampling.ts),
 * which answer it on the run's model slots. Text and image content are passed; other content
 * (audio, tool use) is refused with a message naming it.
 */
import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { Headers, SAMPLING_SUBJECT, decodeSamplingReply, encodeSamplingRequest, type Bus, type SamplingMessage, type SamplingRequest } from '@agentloop/bus';
import type { McpSamplingEntry } from './client-config.js';
import type { McpCaller, Sampler } from './client-features.js';

export type SamplingParams = CreateMessageRequest['params'];
export type SamplingResult = CreateMessageResult;

/** How long the orchestrator has to answer (the model call included). */
const SAMPLING_TIMEOUT_MS = 120_000;

/** The relay request for one server's sampling request (its `sampling:` settings cap the tokens). */
export function samplingRequest(server: string, settings: McpSamplingEntry, caller: McpCaller, params: SamplingParams): SamplingRequest {
  const messages: SamplingMessage[] = params.messages.map((m, i) => {
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    const texts: string[] = [];
    const images: Array<{ mimeType: string; data: string }> = [];
    for (const b of blocks) {
      if (b.type === 'text') texts.push(b.text);
      else if (b.type === 'image') images.push({ mimeType: b.mimeType, data: b.data });
      else throw new Error(`messages[${i}] holds ${b.type} content, which AgentLoop does not pass to its models (text and images only)`);
    }
    return { role: m.role, text: texts.join('\n'), ...(images.length ? { images } : {}) };
  });
  return {
    run_id: caller.runId,
    tool_call_id: caller.toolCallId,
    server,
    slot: settings.slot,
    hints: (params.modelPreferences?.hints ?? []).map((h) => h.name).filter((n): n is string => typeof n === 'string'),
    ...(params.systemPrompt ? { system_prompt: params.systemPrompt } : {}),
    messages,
    max_tokens: Math.min(params.maxTokens, settings.max_tokens),
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.stopSequences?.length ? { stop_sequences: params.stopSequences } : {}),
  };
}

/** A Sampler that asks the orchestrators over the bus; `settingsOf` gives each server's `sampling:` entry. */
export function busSampler(bus: Bus, settingsOf: (server: string) => McpSamplingEntry | undefined): Sampler {
  return async (server, caller, params) => {
    const settings = settingsOf(server);
    if (!settings?.enabled) throw new Error(`sampling is not enabled for MCP server ${server}`);
    const req = samplingRequest(server, settings, caller, params);
    const res = await bus.request(SAMPLING_SUBJECT, encodeSamplingRequest(req), {
      timeoutMs: SAMPLING_TIMEOUT_MS,
      headers: { [Headers.tenant]: caller.tenantId },
    });
    const reply = decodeSamplingReply(res.data);
    return { model: reply.model, role: 'assistant', content: { type: 'text', text: reply.text }, stopReason: reply.stop_reason };
  };
}
