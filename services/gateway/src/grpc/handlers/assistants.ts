/**
 * CreateAssistant, GetAssistant, UpdateAssistant, DeleteAssistant, SearchAssistants, CountAssistants,
 * ListAssistantVersions, SetLatestAssistantVersion: HTTP's /assistants routes over gRPC, through the
 * same operations (assistant-api.ts): each request becomes the HTTP body, validated by the same
 * schemas. Another tenant's assistant is NOT_FOUND.
 */
import {
  AssistantInfoSchema,
  CountResponseSchema,
  create,
  DeleteAssistantResponseSchema,
  ListAssistantVersionsResponseSchema,
  SearchAssistantsResponseSchema,
  type AssistantInfo,
} from '@agentloop/proto';
import { AssistantApi, AssistantExistsError, AssistantParams } from '../../assistant-api.js';
import type { ApiAssistant } from '../../serialize.js';
import { parseRequest } from '../../validation.js';
import type { CallScope, GrpcContext } from '../call.js';
import { jsonText, parseJsonField, withProtoFieldNames } from '../convert.js';
import type { RequestOf, ResponseOf } from '../definition.js';
import { alreadyExists } from '../../errors.js';

/** Assistant body key → request field, for validation errors. */
const ASSISTANT_REQUEST_FIELDS: Readonly<Record<string, string>> = {
  assistant_id: 'assistant_id',
  graph_id: 'graph_id',
  name: 'name',
  description: 'description',
  config: 'config_json',
  context: 'context_json',
  metadata: 'metadata_json',
  limit: 'limit',
  offset: 'offset',
  sort_by: 'sort_by',
  sort_order: 'sort_order',
  version: 'version',
};

const given = (s: string): string | undefined => (s === '' ? undefined : s);
const msOf = (iso: string | undefined): bigint => (iso === undefined ? 0n : BigInt(Date.parse(iso)));

function toAssistantInfo(a: Partial<ApiAssistant>): AssistantInfo {
  return create(AssistantInfoSchema, {
    assistantId: a.assistant_id ?? '',
    graphId: a.graph_id ?? '',
    name: a.name ?? '',
    description: a.description ?? '',
    configJson: jsonText(a.config),
    contextJson: jsonText(a.context),
    metadataJson: jsonText(a.metadata),
    version: a.version ?? 0,
    createdAtMs: msOf(a.created_at),
    updatedAtMs: msOf(a.updated_at),
  });
}

/** Runs `fn`, naming the request's fields in validation errors, and an id taken as ALREADY_EXISTS. */
async function asAssistantCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AssistantExistsError) throw alreadyExists(err.message.replace('if_exists "do_nothing"', 'if_exists_do_nothing'));
    throw withProtoFieldNames(err, ASSISTANT_REQUEST_FIELDS);
  }
}

/** The body fields an assistant request carries (empty: not given). */
function documentFields(req: RequestOf<'createAssistant'> | RequestOf<'updateAssistant'>) {
  return {
    graph_id: given(req.graphId),
    name: given(req.name),
    config: parseJsonField(req.configJson, 'config_json'),
    context: parseJsonField(req.contextJson, 'context_json'),
    metadata: parseJsonField(req.metadataJson, 'metadata_json'),
  };
}

export function assistantHandlers(ctx: GrpcContext) {
  const assistants = new AssistantApi(ctx.store);
  const idOf = (id: string): string => parseRequest(AssistantParams, { assistant_id: id }, 'body').assistant_id;
  return {
    createAssistant(req: RequestOf<'createAssistant'>, { tenant }: CallScope): Promise<ResponseOf<'createAssistant'>> {
      return asAssistantCall(async () => {
        const body = {
          ...documentFields(req),
          graph_id: req.graphId === '' ? 'agent' : req.graphId,
          assistant_id: given(req.assistantId),
          description: given(req.description),
          if_exists: req.ifExistsDoNothing ? 'do_nothing' : undefined,
        };
        return toAssistantInfo(await assistants.create(tenant, body));
      });
    },

    getAssistant(req: RequestOf<'getAssistant'>, { tenant }: CallScope): Promise<ResponseOf<'getAssistant'>> {
      return asAssistantCall(async () => toAssistantInfo(await assistants.get(tenant, idOf(req.assistantId))));
    },

    updateAssistant(req: RequestOf<'updateAssistant'>, { tenant }: CallScope): Promise<ResponseOf<'updateAssistant'>> {
      return asAssistantCall(async () => {
        const id = idOf(req.assistantId);
        const description = req.description === undefined ? undefined : req.description === '' ? null : req.description;
        return toAssistantInfo(await assistants.update(tenant, id, { ...documentFields(req), description }));
      });
    },

    deleteAssistant(req: RequestOf<'deleteAssistant'>, { tenant }: CallScope): Promise<ResponseOf<'deleteAssistant'>> {
      return asAssistantCall(async () => {
        await assistants.delete(tenant, idOf(req.assistantId));
        return create(DeleteAssistantResponseSchema, {});
      });
    },

    searchAssistants(req: RequestOf<'searchAssistants'>, { tenant }: CallScope): Promise<ResponseOf<'searchAssistants'>> {
      return asAssistantCall(async () => {
        const { page, nextOffset } = await assistants.search(tenant, {
          graph_id: given(req.graphId),
          name: given(req.name),
          metadata: parseJsonField(req.metadataJson, 'metadata_json'),
          limit: req.limit === 0 ? undefined : req.limit,
          offset: req.offset,
          sort_by: given(req.sortBy),
          sort_order: given(req.sortOrder),
        });
        return create(SearchAssistantsResponseSchema, { assistants: page.map(toAssistantInfo), nextOffset: nextOffset ?? 0 });
      });
    },

    countAssistants(req: RequestOf<'countAssistants'>, { tenant }: CallScope): Promise<ResponseOf<'countAssistants'>> {
      return asAssistantCall(async () => {
        const filter = { graph_id: given(req.graphId), name: given(req.name), metadata: parseJsonField(req.metadataJson, 'metadata_json') };
        return create(CountResponseSchema, { count: BigInt(await assistants.count(tenant, filter)) });
      });
    },

    listAssistantVersions(req: RequestOf<'listAssistantVersions'>, { tenant }: CallScope): Promise<ResponseOf<'listAssistantVersions'>> {
      return asAssistantCall(async () => {
        const versions = await assistants.versions(tenant, idOf(req.assistantId), {
          metadata: parseJsonField(req.metadataJson, 'metadata_json'),
          limit: req.limit === 0 ? undefined : req.limit,
          offset: req.offset,
        });
        return create(ListAssistantVersionsResponseSchema, { versions: versions.map(toAssistantInfo) });
      });
    },

    setLatestAssistantVersion(req: RequestOf<'setLatestAssistantVersion'>, { tenant }: CallScope): Promise<ResponseOf<'setLatestAssistantVersion'>> {
      return asAssistantCall(async () => toAssistantInfo(await assistants.setLatest(tenant, idOf(req.assistantId), { version: req.version })));
    },
  };
}
