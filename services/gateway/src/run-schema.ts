import { z } from 'zod';
import { JsonObjectSchema, MetadataSchema } from './validation.js';

/** Stream modes the LangGraph SDK can request. */
export const STREAM_MODES = [
  'values',
  'messages',
  'messages-tuple',
  'updates',
  'events',
  'debug',
  'tasks',
  'checkpoints',
  'custom',
  'tools',
  'lifecycle',
] as const;

export const StreamModeSchema = z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))]);

/**
 * The nodes of the `agent` graph (services/orchestrator/src/graph.ts), which `interrupt_before` /
 * `interrupt_after` may name; a name outside it would be ignored silently by the graph.
 */
export const AGENT_GRAPH_NODES = ['agent', 'approve', 'await_approval', 'tools', 'elicit', 'delegate', 'human', 'finalize', 'compact'] as const;

const NodeName = z.string().refine((n) => (AGENT_GRAPH_NODES as readonly string[]).includes(n), {
  error: (issue) => `"${String(issue.input)}" is not a node of graph "agent" (nodes: ${AGENT_GRAPH_NODES.join(', ')})`,
});
const NodeList = z.union([z.literal('*'), z.array(NodeName)], { error: 'expected "*" or a list of node names' });

/**
 * Body of every run-creating endpoint (`/threads/{id}/runs[/wait|/stream]`,
 * `/runs[/wait|/stream]`), as `@langchain/langgraph-sdk` sends it. Fields the
 * gateway does not act on (checkpoint, durability, feedback_keys, ...) are
 * accepted so unchanged clients keep working. `null` means "not given", as the
 * Python SDK sometimes sends it.
 */
export const RunCreateBody = z.object({
  assistant_id: z.string().min(1, 'assistant_id is required: the assistant id or the graph id "agent"'),
  input: JsonObjectSchema.nullish(),
  command: z
    .object({
      resume: z.unknown().optional(),
      update: z.unknown().optional(),
      goto: z.unknown().optional(),
    })
    .nullish(),
  config: z
    .looseObject({
      tags: z.array(z.string()).optional(),
      recursion_limit: z.number().int().positive().optional(),
      configurable: JsonObjectSchema.optional(),
    })
    .nullish(),
  context: z.unknown().optional(),
  metadata: MetadataSchema.nullish(),
  stream_mode: StreamModeSchema.nullish(),
  stream_subgraphs: z.boolean().nullish(),
  stream_resumable: z.boolean().nullish(),
  feedback_keys: z.array(z.string()).nullish(),
  webhook: z.url({ protocol: /^https?$/, message: 'webhook must be an http(s) URL' }).nullish(),
  multitask_strategy: z.enum(['reject', 'interrupt', 'rollback', 'enqueue']).nullish(),
  if_not_exists: z.enum(['create', 'reject']).nullish(),
  on_completion: z.enum(['delete', 'keep', 'complete', 'continue']).nullish(),
  on_disconnect: z.enum(['cancel', 'continue']).nullish(),
  interrupt_before: NodeList.nullish(),
  interrupt_after: NodeList.nullish(),
  after_seconds: z
    .number()
    .min(0)
    .max(30 * 24 * 3600)
    .nullish(),
  checkpoint: z.unknown().optional(),
  checkpoint_id: z.string().nullish(),
  checkpoint_during: z.boolean().nullish(),
  durability: z.enum(['exit', 'async', 'sync']).nullish(),
  strict_resume: z.boolean().nullish(),
  langsmith_tracer: z.unknown().optional(),
  // Record and replay (issue 17): replay a recorded run of the tenant, or an exported recording.
  replay_of: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'replay_of must be a run id (UUID)')
    .nullish(),
  replay_tools: z.enum(['recorded', 'execute']).nullish(),
  replay_recording: JsonObjectSchema.nullish(),
});
export type RunCreateBody = z.infer<typeof RunCreateBody>;

/** The requested stream modes as a list; LangGraph's default is ["values"]. */
export function normalizeStreamModes(v: string | readonly string[] | null | undefined): string[] {
  if (v === undefined || v === null) return ['values'];
  const list = typeof v === 'string' ? [v] : [...v];
  return list.length === 0 ? ['values'] : [...new Set(list)];
}

/**
 * Whether an event goes to a client that asked for `modes`. `metadata`,
 * `error` and `end` always do; `messages-tuple` is served as `messages`
 * events; `messages` covers the `messages/partial|complete|metadata` family;
 * subgraph events (`updates|ns`) follow their base mode.
 */
export function wantsEvent(event: string, modes: readonly string[]): boolean {
  if (event === 'metadata' || event === 'error' || event === 'end') return true;
  const base = event.split('|')[0] ?? event;
  if (modes.includes(base)) return true;
  if (base === 'messages' && modes.includes('messages-tuple')) return true;
  if (base.startsWith('messages/') && modes.includes('messages')) return true;
  return false;
}

/** The request as stored on the run record (`kwargs`): what the client sent, minus ids and metadata, unset fields dropped. */
export function runKwargs(body: RunCreateBody, streamModes: string[]): Record<string, unknown> {
  const { assistant_id: _a, metadata: _m, langsmith_tracer: _l, replay_recording: _r, ...rest } = body;
  const kwargs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined && v !== null) kwargs[k] = v;
  kwargs.stream_mode = streamModes;
  return kwargs;
}

/**
 * The run's config as the orchestrator gets it: a `checkpoint` / `checkpoint_id` of the body goes
 * to `configurable.checkpoint_id` (and `checkpoint_ns`), as LangGraph takes it — the run starts
 * from that checkpoint, forking the thread there.
 */
export function runConfig(body: Pick<RunCreateBody, 'config' | 'checkpoint' | 'checkpoint_id'>): Record<string, unknown> {
  const config: Record<string, unknown> = { ...(body.config ?? {}) };
  const cp =
    body.checkpoint && typeof body.checkpoint === 'object' && !Array.isArray(body.checkpoint) ? (body.checkpoint as Record<string, unknown>) : undefined;
  const checkpointId = body.checkpoint_id ?? (typeof cp?.checkpoint_id === 'string' ? cp.checkpoint_id : undefined);
  if (!checkpointId) return config;
  const ns = typeof cp?.checkpoint_ns === 'string' ? cp.checkpoint_ns : '';
  config.configurable = { ...((config.configurable as Record<string, unknown> | undefined) ?? {}), checkpoint_id: checkpointId, checkpoint_ns: ns };
  return config;
}

/** `interrupt_before` / `interrupt_after` as the RunJob carries them: "*" becomes ["*"]. */
export const nodeList = (v: '*' | string[] | null | undefined): string[] => (v === '*' ? ['*'] : (v ?? []));
