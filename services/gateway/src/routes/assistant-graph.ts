/**
 * What an assistant's graph looks like: its schemas (the agent configuration's JSON Schema as
 * `config_schema`), the drawing of the real compiled `agent` graph, and its subgraphs (none: a
 * delegated agent is a run of its own, not a subgraph).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { agentConfigJsonSchema, agentGraphDrawing } from '@agentloop/orchestrator';
import type { RouteContext } from '../context.js';
import { getApiAssistant } from '../assistant-registry.js';
import { parseRequest } from '../validation.js';

const AssistantParams = z.object({ assistant_id: z.string().min(1) });
const SubgraphParams = AssistantParams.extend({ namespace: z.string().min(1).optional() });

/** `xray`: true/false, or how many levels of subgraphs to draw (LangGraph's query parameter). */
const GraphQuery = z.object({
  xray: z.union([z.enum(['true', 'false']).transform((v) => v === 'true'), z.coerce.number().int().min(0).max(100)]).optional(),
});

const messages = { type: 'array', items: { type: 'object' } };

/**
 * LangGraph's `config_schema` describes the graph's configurable fields: the object under
 * `config.configurable` (model, max_loops, system_prompt...), not the whole run config.
 */
function configurableSchema(): Record<string, unknown> {
  const whole = agentConfigJsonSchema() as { $schema?: string; properties?: { configurable?: Record<string, unknown> } };
  return { ...(whole.$schema ? { $schema: whole.$schema } : {}), ...(whole.properties?.configurable ?? { type: 'object' }) };
}
const stateSchema = { type: 'object', properties: { messages }, required: ['messages'] };

export function registerAssistantGraphRoutes(app: FastifyInstance, ctx: Pick<RouteContext, 'store'>): void {
  const { store } = ctx;

  app.get('/assistants/:assistant_id/schemas', async (request) => {
    const { assistant_id } = parseRequest(AssistantParams, request.params, 'params');
    const a = await getApiAssistant(store, request.tenantId, assistant_id);
    return {
      graph_id: a.graph_id,
      input_schema: stateSchema,
      output_schema: stateSchema,
      state_schema: stateSchema,
      config_schema: configurableSchema(),
      context_schema: { type: 'object' },
    };
  });

  app.get('/assistants/:assistant_id/graph', async (request) => {
    const { assistant_id } = parseRequest(AssistantParams, request.params, 'params');
    const { xray } = parseRequest(GraphQuery, request.query, 'query');
    await getApiAssistant(store, request.tenantId, assistant_id);
    return agentGraphDrawing(xray);
  });

  const subgraphs = async (request: { params: unknown; tenantId: string }) => {
    const { assistant_id } = parseRequest(SubgraphParams, request.params, 'params');
    await getApiAssistant(store, request.tenantId, assistant_id);
    return {};
  };
  app.get('/assistants/:assistant_id/subgraphs', subgraphs);
  app.get('/assistants/:assistant_id/subgraphs/:namespace', subgraphs);
}
