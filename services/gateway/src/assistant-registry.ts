/**
 * Assistants as runs see them (issue 11): which assistant an `assistant_id` (or graph id) names for
 * a tenant, and how its configuration combines with a run's own. The built-in assistant of the
 * `agent` graph is not stored: every tenant has it, read-only, at version 1 with an empty config.
 */
import { isUuid } from '@agentloop/core';
import type { AssistantRecord, AssistantVersionRecord, JsonObject, Store } from '@agentloop/store';
import { notFound } from './errors.js';
import { DEFAULT_ASSISTANT_ID, GRAPH_ID, defaultAssistant, type ApiAssistant } from './serialize.js';

/** What a run takes from its assistant, as it is at submission. */
export interface RunAssistant {
  assistant_id: string;
  graph_id: string;
  version: number;
  config: JsonObject;
  context: JsonObject;
}

/** An assistant version as the SDK's `AssistantVersion` (no `updated_at`). */
export type ApiAssistantVersion = Omit<ApiAssistant, 'updated_at'>;

/** True when `idOrGraph` names the built-in assistant: its UUID (any case) or the graph id. */
export function isBuiltinAssistant(idOrGraph: string): boolean {
  return idOrGraph === GRAPH_ID || idOrGraph.toLowerCase() === DEFAULT_ASSISTANT_ID;
}

/** The stored id of a UUID path or body value: UUIDs compare case-insensitively, as in LangGraph. */
export const assistantKey = (id: string): string => id.toLowerCase();

export function assistantNotFound(id: string): Error {
  return notFound(
    `Assistant "${id}" not found. Create one with POST /assistants (graph_id "${GRAPH_ID}"), or use the built-in assistant ` +
      `"${GRAPH_ID}" (assistant_id ${DEFAULT_ASSISTANT_ID}).`,
  );
}

/** The tenant's assistant named by `idOrGraph` in the API's shape, or a 404 ApiError (another tenant's assistant included). */
export async function getApiAssistant(store: Store, tenantId: string, idOrGraph: string): Promise<ApiAssistant> {
  if (isBuiltinAssistant(idOrGraph)) return defaultAssistant();
  // Any other non-UUID would name a graph, and this deployment has only `agent`.
  if (!isUuid(idOrGraph)) throw assistantNotFound(idOrGraph);
  const stored = await store.getAssistant(tenantId, assistantKey(idOrGraph));
  if (!stored) throw assistantNotFound(idOrGraph);
  return toApiAssistant(stored);
}

/**
 * The assistant a run uses: its id, graph, the version in use now and that version's config and
 * context. Throws a 404 ApiError for an unknown id, or one of another tenant.
 */
export async function resolveRunAssistant(store: Store, tenantId: string, assistantIdOrGraphId: string): Promise<RunAssistant> {
  const a = await getApiAssistant(store, tenantId, assistantIdOrGraphId);
  return { assistant_id: a.assistant_id, graph_id: a.graph_id, version: a.version, config: a.config, context: a.context };
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A run's config over its assistant's, as LangGraph combines them: the run's keys win, key by key
 * inside `configurable` too; `tags` are the assistant's followed by the run's.
 */
export function mergeAssistantConfig(assistantConfig: JsonObject, runConfig: JsonObject | null | undefined): JsonObject {
  const run = runConfig ?? {};
  const merged: JsonObject = { ...assistantConfig, ...run };
  if (isObject(assistantConfig.configurable) || isObject(run.configurable)) {
    merged.configurable = {
      ...(isObject(assistantConfig.configurable) ? assistantConfig.configurable : {}),
      ...(isObject(run.configurable) ? run.configurable : {}),
    };
  }
  const tags = [assistantConfig.tags, run.tags].flatMap((t) => (Array.isArray(t) ? (t as unknown[]) : []));
  if (tags.length > 0) merged.tags = tags;
  return merged;
}

/** A run's context over its assistant's: the run's keys win. */
export function mergeContext(assistantContext: JsonObject, runContext: JsonObject | null | undefined): JsonObject {
  return { ...assistantContext, ...(runContext ?? {}) };
}

export function toApiAssistant(a: AssistantRecord): ApiAssistant {
  return {
    assistant_id: a.assistantId,
    graph_id: a.graphId,
    config: a.config,
    context: a.context,
    metadata: a.metadata,
    name: a.name,
    description: a.description,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
    version: a.version,
  };
}

export function toApiAssistantVersion(v: AssistantVersionRecord): ApiAssistantVersion {
  return {
    assistant_id: v.assistantId,
    graph_id: v.graphId,
    config: v.config,
    context: v.context,
    metadata: v.metadata,
    name: v.name,
    description: v.description,
    created_at: v.createdAt.toISOString(),
    version: v.version,
  };
}
