import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { Headers, decodeSamplingRequest, encodeSamplingReply, type RequestHandler, type SamplingReply } from '@agentloop/bus';
import { AgentLoopError, InvalidArgumentError, NotFoundError, errorMessage, type Logger } from '@agentloop/core';
import type { Store } from '@agentloop/store';
import { MODEL_SLOTS, type ModelRegistry, type ModelSlot } from '../models/registry.js';
import type { TokenAccounting } from '../budgets/token-accounting.js';

const SamplingRequestSchema = z.object({
  run_id: z.string().min(1),
  tool_call_id: z.string(),
  server: z.string().min(1),
  slot: z.enum(MODEL_SLOTS),
  hints: z.array(z.string()).default([]),
  system_prompt: z.string().optional(),
  messages: z
    .array(
      z.object({
        role: z.enum(['user', 'assistant']),
        text: z.string(),
        images: z.array(z.object({ mimeType: z.string().min(1), data: z.string() })).optional(),
      }),
    )
    .min(1),
  max_tokens: z.number().int().min(1),
  temperature: z.number().min(0).max(2).optional(),
  stop_sequences: z.array(z.string()).optional(),
});

/**
 * `agentloop.orchestrator.sampling` (libs/bus sampling.ts): an MCP server's `sampling/createMessage`
 * during a run's tool call, answered on the model slot the server's hints name (when one names a
 * slot) or the slot configured for the server. Only for a run of the caller's tenant that is
 * running: a server cannot spend a finished run's or another tenant's model budget.
 */
export function samplingHandler(deps: {
  store: Pick<Store, 'getRun'>;
  models: Pick<ModelRegistry, 'oneOff'>;
  /** The tenant's token budgets (checked before, the usage ledger written after); the run's own `max_tokens_total` is not. */
  tokens?: Pick<TokenAccounting, 'forRun'>;
  logger: Logger;
}): RequestHandler {
  return async (msg, ctx) => {
    const tenantId = msg.headers[Headers.tenant];
    if (!tenantId) throw new InvalidArgumentError('A sampling request needs the agentloop-tenant header');
    let body: unknown;
    try {
      body = decodeSamplingRequest(msg.data);
    } catch (err) {
      throw new AgentLoopError('MALFORMED_REQUEST', `A sampling request must be a proto SamplingRequest: ${errorMessage(err)}`);
    }
    const parsed = SamplingRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new InvalidArgumentError(`Invalid sampling request: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    const req = parsed.data;
    const run = await deps.store.getRun(tenantId, req.run_id);
    if (!run) throw new NotFoundError(`Run ${req.run_id} not found`);
    if (run.status !== 'running') throw new AgentLoopError('CONFLICT', `Run ${req.run_id} is ${run.status}, not running: it cannot sample`);

    const accounting = deps.tokens?.forRun(tenantId, null);
    const stop = await accounting?.check(0);
    if (stop) throw new AgentLoopError('RESOURCE_EXHAUSTED', stop.message);

    const hinted = req.hints.find((h): h is ModelSlot => (MODEL_SLOTS as readonly string[]).includes(h));
    const resolved = deps.models.oneOff(hinted ?? req.slot, {
      maxTokens: req.max_tokens,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    });
    const messages: BaseMessage[] = [];
    if (req.system_prompt) messages.push(new SystemMessage(req.system_prompt));
    for (const m of req.messages) {
      if (m.role === 'assistant') messages.push(new AIMessage(m.text));
      else if (!m.images?.length) messages.push(new HumanMessage(m.text));
      else {
        const images = m.images.map((i) => ({ type: 'image_url' as const, image_url: { url: `data:${i.mimeType};base64,${i.data}` } }));
        messages.push(new HumanMessage({ content: [...(m.text ? [{ type: 'text' as const, text: m.text }] : []), ...images] }));
      }
    }
    const answer = await resolved.model.invoke(messages, { signal: ctx.signal, ...(req.stop_sequences?.length ? { stop: req.stop_sequences } : {}) });
    const text =
      typeof answer.content === 'string' ? answer.content : answer.content.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('');
    const finish = (answer.response_metadata as { finish_reason?: string } | undefined)?.finish_reason;
    const usage = (answer as AIMessage).usage_metadata;
    const reply: SamplingReply = {
      model: resolved.modelId,
      text,
      stop_reason: finish === 'length' ? 'maxTokens' : 'endTurn',
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: usage?.output_tokens ?? 0,
    };
    const spent = { input_tokens: reply.input_tokens, output_tokens: reply.output_tokens, total_tokens: reply.input_tokens + reply.output_tokens };
    await accounting?.record(resolved.modelId, spent, false);
    deps.logger.info(
      {
        tenant: tenantId,
        run_id: req.run_id,
        tool_call_id: req.tool_call_id,
        mcp_server: req.server,
        slot: resolved.label,
        tokens: reply.input_tokens + reply.output_tokens,
      },
      'MCP sampling request answered',
    );
    return encodeSamplingReply(reply);
  };
}
