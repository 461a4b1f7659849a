/**
 * Assistants (issue 11), transport-neutral: LangGraph Platform's versioned agent configurations over
 * the `agent` graph, per tenant, beside the read-only built-in one every tenant has. Each operation
 * parses its request with the zod schema of the HTTP body (422 naming `body.<field>`) and returns
 * the assistant as the HTTP API shows it; HTTP (routes/assistants.ts) and gRPC
 * (grpc/handlers/assistants.ts) both call these. Another tenant's assistant is "not found".
 */
import { z } from 'zod';
import { newId } from '@agentloop/core';
import { ASSISTANT_SORT_FIELDS, type AssistantFilter, type JsonObject, type Store } from '@agentloop/store';
import { conflict, ApiError, invalid } from './errors.js';
import { defaultAssistant, DEFAULT_ASSISTANT_ID, GRAPH_ID, type ApiAssistant } from './serialize.js';
import { JsonObjectSchema, MetadataSchema, Uuid, parseRequest } from './validation.js';
import { parseAgentConfig } from './assistant-config.js';
import {
  assistantKey,
  assistantNotFound,
  getApiAssistant,
  isBuiltinAssistant,
  toApiAssistant,
  toApiAssistantVersion,
  type ApiAssistantVersion,
} from './assistant-registry.js';
import { pageWithBuiltin, storedWindow } from './assistant-paging.js';

/** An assistant with that id exists already (HTTP 409; gRPC ALREADY_EXISTS, apart from other conflicts). */
export class AssistantExistsError extends ApiError {
  override name = 'AssistantExistsError';
  constructor(id: string) {
    super('ALREADY_EXISTS', `Assistant ${id} already exists. Pass if_exists "do_nothing" to get it instead.`);
  }
}

/** Longest assistant name and description: labels, not documents. */
const NAME_MAX = 1024;
const DESCRIPTION_MAX = 64 * 1024;

const Fields = {
  config: JsonObjectSchema.nullish(),
  context: JsonObjectSchema.nullish(),
  metadata: MetadataSchema.nullish(),
  name: z.string().min(1).max(NAME_MAX).nullish(),
  description: z.string().max(DESCRIPTION_MAX).nullish(),
};

const CreateBody = z.object({
  assistant_id: Uuid.nullish(),
  graph_id: z.string().min(1),
  if_exists: z.enum(['raise', 'do_nothing']).nullish(),
  ...Fields,
});

const PatchBody = z.object({ graph_id: z.string().min(1).nullish(), ...Fields });

const Filter = {
  graph_id: z.string().nullish(),
  name: z.string().nullish(),
  metadata: MetadataSchema.nullish(),
};

const SearchBody = z.object({
  ...Filter,
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(ASSISTANT_SORT_FIELDS).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.string()).nullish(),
});

const CountBody = z.object(Filter);
const VersionsBody = z.object({
  metadata: MetadataSchema.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
});
const LatestBody = z.object({ version: z.number().int().min(1) });
export const AssistantParams = z.object({ assistant_id: z.string().min(1) });

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

function storeFilter(body: z.infer<typeof CountBody>): AssistantFilter {
  return {
    ...(body.graph_id != null ? { graphId: body.graph_id } : {}),
    ...(body.name != null ? { name: body.name } : {}),
    ...(body.metadata != null ? { metadata: body.metadata } : {}),
  };
}

/** The built-in assistant when it matches the filters, as the store matches stored ones. */
function builtinIfMatching(body: z.infer<typeof CountBody>): ApiAssistant | null {
  const a = defaultAssistant();
  const ok =
    (body.graph_id == null || body.graph_id === a.graph_id) &&
    (body.name == null || a.name.toLowerCase().includes(body.name.toLowerCase())) &&
    metadataMatches(a.metadata, body.metadata);
  return ok ? a : null;
}

function requireAgentGraph(graphId: string, path: string): void {
  if (graphId !== GRAPH_ID) throw invalid(path, `unknown graph "${graphId}": this deployment serves one graph, "${GRAPH_ID}"`);
}

function readOnlyBuiltin(): Error {
  return conflict(
    `The built-in assistant "${GRAPH_ID}" (${DEFAULT_ASSISTANT_ID}) is read-only. Create your own assistant with POST /assistants ` +
      `(graph_id "${GRAPH_ID}") to change its configuration.`,
  );
}

/** The listing order of a search, the same as the store's (ties by assistant_id ascending). */
function orderOf(sortBy: (typeof ASSISTANT_SORT_FIELDS)[number], order: 'asc' | 'desc') {
  return (a: ApiAssistant, b: ApiAssistant): boolean => {
    const x = a[sortBy];
    const y = b[sortBy];
    if (x !== y) return order === 'asc' ? x < y : x > y;
    return a.assistant_id < b.assistant_id;
  };
}

async function searchPage(store: Store, tenantId: string, body: z.infer<typeof SearchBody>): Promise<{ page: ApiAssistant[]; more: boolean }> {
  const offset = body.offset ?? 0;
  const limit = body.limit ?? 10;
  const sortBy = body.sort_by ?? 'created_at';
  const sortOrder = body.sort_order ?? 'desc';
  const window = storedWindow(offset, limit);
  const stored = await store.searchAssistants(tenantId, { ...storeFilter(body), limit: window.count, offset: window.start, sortBy, sortOrder });
  return pageWithBuiltin(stored.map(toApiAssistant), offset, limit, builtinIfMatching(body), orderOf(sortBy, sortOrder));
}

export class AssistantApi {
  constructor(private readonly store: Store) {}

  /** POST /assistants. */
  async create(tenantId: string, rawBody: unknown): Promise<ApiAssistant> {
    const body = parseRequest(CreateBody, rawBody, 'body');
    requireAgentGraph(body.graph_id, 'body.graph_id');
    const config = body.config ? parseAgentConfig(body.config, 'body.config') : {};
    const id = body.assistant_id ?? newId();
    if (isBuiltinAssistant(id)) {
      if (body.if_exists === 'do_nothing') return defaultAssistant();
      throw readOnlyBuiltin();
    }
    const { assistant, created } = await this.store.createAssistant({
      tenantId,
      assistantId: assistantKey(id),
      graphId: body.graph_id,
      name: body.name ?? 'Untitled',
      description: body.description ?? null,
      config,
      context: body.context ?? {},
      metadata: body.metadata ?? {},
    });
    if (!created && body.if_exists !== 'do_nothing') throw new AssistantExistsError(id);
    return toApiAssistant(assistant);
  }

  /** POST /assistants/search: one page (projected by `select`), and whether more follow. */
  async search(tenantId: string, rawBody: unknown): Promise<{ page: Partial<ApiAssistant>[]; nextOffset: number | undefined }> {
    const body = parseRequest(SearchBody, rawBody, 'body');
    const { page, more } = await searchPage(this.store, tenantId, body);
    return { page: page.map((a) => project(a, body.select)), nextOffset: more ? (body.offset ?? 0) + (body.limit ?? 10) : undefined };
  }

  /** POST /assistants/count. */
  async count(tenantId: string, rawBody: unknown): Promise<number> {
    const body = parseRequest(CountBody, rawBody, 'body');
    return (await this.store.countAssistants(tenantId, storeFilter(body))) + (builtinIfMatching(body) ? 1 : 0);
  }

  /** GET /assistants/{id}. */
  get(tenantId: string, assistantId: string): Promise<ApiAssistant> {
    return getApiAssistant(this.store, tenantId, assistantId);
  }

  /** PATCH /assistants/{id}: a new version with the fields given. */
  async update(tenantId: string, assistantId: string, rawBody: unknown): Promise<ApiAssistant> {
    const body = parseRequest(PatchBody, rawBody, 'body');
    if (isBuiltinAssistant(assistantId)) throw readOnlyBuiltin();
    await getApiAssistant(this.store, tenantId, assistantId);
    if (body.graph_id != null) requireAgentGraph(body.graph_id, 'body.graph_id');
    const updated = await this.store.updateAssistant(tenantId, assistantKey(assistantId), {
      ...(body.graph_id != null ? { graphId: body.graph_id } : {}),
      ...(body.config != null ? { config: parseAgentConfig(body.config, 'body.config') } : {}),
      ...(body.context != null ? { context: body.context } : {}),
      ...(body.metadata != null ? { metadata: body.metadata } : {}),
      ...(body.name != null ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
    });
    if (!updated) throw assistantNotFound(assistantId);
    return toApiAssistant(updated);
  }

  /** DELETE /assistants/{id}. */
  async delete(tenantId: string, assistantId: string): Promise<void> {
    if (isBuiltinAssistant(assistantId)) throw readOnlyBuiltin();
    await getApiAssistant(this.store, tenantId, assistantId);
    if (!(await this.store.deleteAssistant(tenantId, assistantKey(assistantId)))) throw assistantNotFound(assistantId);
  }

  /** POST /assistants/{id}/versions: newest first. */
  async versions(tenantId: string, assistantId: string, rawBody: unknown): Promise<ApiAssistantVersion[]> {
    const body = parseRequest(VersionsBody, rawBody, 'body');
    const current = await getApiAssistant(this.store, tenantId, assistantId);
    const offset = body.offset ?? 0;
    const limit = body.limit ?? 10;
    if (isBuiltinAssistant(assistantId)) {
      const { updated_at: _u, ...v1 } = current;
      return metadataMatches(v1.metadata, body.metadata) ? [v1].slice(offset, offset + limit) : [];
    }
    const versions = await this.store.listAssistantVersions(tenantId, current.assistant_id, {
      limit,
      offset,
      ...(body.metadata ? { metadata: body.metadata as JsonObject } : {}),
    });
    return versions.map(toApiAssistantVersion);
  }

  /** POST /assistants/{id}/latest: makes `version` the one runs use. */
  async setLatest(tenantId: string, assistantId: string, rawBody: unknown): Promise<ApiAssistant> {
    const { version } = parseRequest(LatestBody, rawBody, 'body');
    const current = await getApiAssistant(this.store, tenantId, assistantId);
    if (isBuiltinAssistant(assistantId)) {
      if (version !== current.version) throw readOnlyBuiltin();
      return current;
    }
    const latest = await this.store.setAssistantLatest(tenantId, current.assistant_id, version);
    if (!latest) throw assistantNotFound(assistantId);
    return toApiAssistant(latest);
  }
}
