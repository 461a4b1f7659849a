/**
 * PutStoreItem, GetStoreItem, DeleteStoreItem, SearchStoreItems, ListStoreNamespaces: HTTP's /store
 * routes over gRPC, through the same operations (store-api.ts): each request becomes the HTTP body,
 * validated by the same schemas. Another tenant's item is absent, as a missing one.
 */
import {
  create,
  DeleteStoreItemResponseSchema,
  GetStoreItemResponseSchema,
  ListStoreNamespacesResponseSchema,
  PutStoreItemResponseSchema,
  SearchStoreItemsResponseSchema,
  StoreItemSchema,
  type PutStoreItemRequest,
  type StoreItem,
} from '@agentloop/proto';
import { invalid } from '../../errors.js';
import type { ApiStoreHit } from '../../store-api.js';
import type { CallScope, GrpcContext } from '../call.js';
import { jsonText, parseJsonField, withProtoFieldNames } from '../convert.js';
import type { RequestOf, ResponseOf } from '../definition.js';

/** Store body key → request field, for validation errors. */
const STORE_REQUEST_FIELDS: Readonly<Record<string, string>> = {
  namespace: 'namespace',
  key: 'key',
  value: 'value_json',
  index: 'index',
  ttl: 'ttl_minutes',
  refresh_ttl: 'refresh_ttl',
  namespace_prefix: 'namespace_prefix',
  filter: 'filter_json',
  limit: 'limit',
  offset: 'offset',
  query: 'query',
  prefix: 'prefix',
  suffix: 'suffix',
  max_depth: 'max_depth',
};

/** HTTP's `index`: false (not indexed), a list of fields, or absent (the default). */
function indexOf(req: PutStoreItemRequest): false | string[] | undefined {
  if (req.indexDisabled) {
    if (req.index.length > 0) throw invalid('index', 'give either index fields or index_disabled, not both');
    return false;
  }
  return req.index.length > 0 ? req.index : undefined;
}

function toStoreItem(item: ApiStoreHit): StoreItem {
  return create(StoreItemSchema, {
    namespace: item.namespace,
    key: item.key,
    valueJson: jsonText(item.value),
    createdAtMs: BigInt(Date.parse(item.created_at)),
    updatedAtMs: BigInt(Date.parse(item.updated_at)),
    ...(typeof item.score === 'number' ? { score: item.score } : {}),
  });
}

/** Runs `fn`, naming the request's fields (not the HTTP body's) in its validation errors. */
async function withStoreFields<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw withProtoFieldNames(err, STORE_REQUEST_FIELDS);
  }
}

export function storeHandlers(ctx: GrpcContext) {
  const { storeApi } = ctx;
  const zeroIsDefault = (n: number): number | undefined => (n === 0 ? undefined : n);
  return {
    putStoreItem(req: RequestOf<'putStoreItem'>, { tenant }: CallScope): Promise<ResponseOf<'putStoreItem'>> {
      return withStoreFields(async () => {
        await storeApi.putItem(tenant, {
          namespace: req.namespace,
          key: req.key,
          value: parseJsonField(req.valueJson, 'value_json'),
          index: indexOf(req),
          ttl: req.ttlMinutes === 0 ? undefined : req.ttlMinutes,
        });
        return create(PutStoreItemResponseSchema, {});
      });
    },

    getStoreItem(req: RequestOf<'getStoreItem'>, { tenant }: CallScope): Promise<ResponseOf<'getStoreItem'>> {
      return withStoreFields(async () => {
        const item = await storeApi.getItem(tenant, { namespace: req.namespace, key: req.key, refresh_ttl: req.refreshTtl });
        return create(GetStoreItemResponseSchema, item ? { item: toStoreItem(item) } : {});
      });
    },

    deleteStoreItem(req: RequestOf<'deleteStoreItem'>, { tenant }: CallScope): Promise<ResponseOf<'deleteStoreItem'>> {
      return withStoreFields(async () => {
        await storeApi.deleteItem(tenant, { namespace: req.namespace, key: req.key });
        return create(DeleteStoreItemResponseSchema, {});
      });
    },

    searchStoreItems(req: RequestOf<'searchStoreItems'>, { tenant }: CallScope): Promise<ResponseOf<'searchStoreItems'>> {
      return withStoreFields(async () => {
        const { items } = await storeApi.searchItems(tenant, {
          namespace_prefix: req.namespacePrefix,
          filter: parseJsonField(req.filterJson, 'filter_json'),
          limit: zeroIsDefault(req.limit),
          offset: req.offset,
          query: req.query === '' ? undefined : req.query,
          refresh_ttl: req.refreshTtl,
        });
        return create(SearchStoreItemsResponseSchema, { items: items.map(toStoreItem) });
      });
    },

    listStoreNamespaces(req: RequestOf<'listStoreNamespaces'>, { tenant }: CallScope): Promise<ResponseOf<'listStoreNamespaces'>> {
      return withStoreFields(async () => {
        const { namespaces } = await storeApi.listNamespaces(tenant, {
          prefix: req.prefix.length > 0 ? req.prefix : undefined,
          suffix: req.suffix.length > 0 ? req.suffix : undefined,
          max_depth: zeroIsDefault(req.maxDepth),
          limit: zeroIsDefault(req.limit),
          offset: req.offset,
        });
        return create(ListStoreNamespacesResponseSchema, { namespaces: namespaces.map((labels) => ({ labels })) });
      });
    },
  };
}
