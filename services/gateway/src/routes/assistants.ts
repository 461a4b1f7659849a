import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { defaultAssistant, GRAPH_ID, resolveAssistantId, type ApiAssistant } from '../serialize.js';
import { MetadataSchema, parseRequest } from '../validation.js';

const SearchBody = z.object({
  graph_id: z.string().nullish(),
  name: z.string().nullish(),
  metadata: MetadataSchema.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.string().nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.string()).nullish(),
});

const AssistantParams = z.object({ assistant_id: z.string().min(1) });

/** Keeps only the fields named in `select` (LangGraph's projection). */
function project(a: ApiAssistant, select: readonly string[] | null | undefined): Partial<ApiAssistant> {
  if (!select || select.length === 0) return a;
  return Object.fromEntries(Object.entries(a).filter(([k]) => select.includes(k))) as Partial<ApiAssistant>;
}

/** True when every key of `filter` equals the same key of `metadata` (JSON equality). */
export function metadataMatches(metadata: Record<string, unknown>, filter: Record<string, unknown> | null | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, v]) => JSON.stringify(metadata[k]) === JSON.stringify(v));
}

function getAssistant(id: string): ApiAssistant {
  if (resolveAssistantId(id) === undefined) {
    throw notFound(`Assistant "${id}" not found. This deployment serves one assistant: graph "${GRAPH_ID}" (assistant_id ${defaultAssistant().assistant_id}).`);
  }
  return defaultAssistant();
}

/**
 * One built-in assistant for the `agent` graph. It is addressable by its
 * UUID or by the graph id, as in LangGraph.
 */
export function registerAssistantRoutes(app: FastifyInstance): void {
  app.post('/assistants/search', async (request) => {
    const body = parseRequest(SearchBody, request.body, 'body');
    const a = defaultAssistant();
    const matches =
      (body.graph_id == null || body.graph_id === a.graph_id) &&
      (body.name == null || a.name.includes(body.name)) &&
      metadataMatches(a.metadata, body.metadata);
    const all = matches ? [a] : [];
    const offset = body.offset ?? 0;
    return all.slice(offset, offset + (body.limit ?? 10)).map((x) => project(x, body.select));
  });

  app.post('/assistants/count', async (request) => {
    const body = parseRequest(SearchBody, request.body, 'body');
    const a = defaultAssistant();
    return (body.graph_id == null || body.graph_id === a.graph_id) && metadataMatches(a.metadata, body.metadata) ? 1 : 0;
  });

  app.get('/assistants/:assistant_id', async (request) => {
    const { assistant_id } = parseRequest(AssistantParams, request.params, 'params');
    return getAssistant(assistant_id);
  });

  app.get('/assistants/:assistant_id/graph', async (request) => {
    const { assistant_id } = parseRequest(AssistantParams, request.params, 'params');
    getAssistant(assistant_id);
    return {
      nodes: [
        { id: '__start__', name: '__start__' },
        { id: 'agent', name: 'agent' },
        { id: 'tools', name: 'tools' },
        { id: 'finalize', name: 'finalize' },
        { id: '__end__', name: '__end__' },
      ],
      edges: [
        { source: '__start__', target: 'agent' },
        { source: 'agent', target: 'tools', conditional: true },
        { source: 'agent', target: 'finalize', conditional: true },
        { source: 'tools', target: 'agent' },
        { source: 'finalize', target: '__end__' },
      ],
    };
  });

  app.get('/assistants/:assistant_id/schemas', async (request) => {
    const { assistant_id } = parseRequest(AssistantParams, request.params, 'params');
    getAssistant(assistant_id);
    const messages = { type: 'array', items: { type: 'object' } };
    const state = { type: 'object', properties: { messages }, required: ['messages'] };
    return {
      graph_id: GRAPH_ID,
      input_schema: state,
      output_schema: state,
      state_schema: state,
      config_schema: {
        type: 'object',
        properties: {
          model: { type: 'string', description: 'Model slot or id (base, reasoning, vision, code, chat).' },
          max_loops: { type: 'integer', description: 'Maximum agent ⇄ tools iterations.' },
        },
      },
      context_schema: { type: 'object' },
    };
  });

  app.get('/assistants/:assistant_id/subgraphs', async (request) => {
    const { assistant_id } = parseRequest(AssistantParams, request.params, 'params');
    getAssistant(assistant_id);
    return {};
  });
}
