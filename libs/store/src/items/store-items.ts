/**
 * The memory store as its callers use it (issue 12): the gateway's `/store` routes and the
 * agent's `BaseStore` and memory tools. It turns an item's `index` into the text a query matches
 * and, when an embeddings endpoint is configured, into a vector on write and a query vector on
 * search; everything else is the tenant-scoped `Store`.
 */
import type { JsonObject, NamespaceListing, Store, StoreItemFilter, StoreItemHit, StoreItemRecord } from '../types.js';
import type { Embedder } from './embeddings.js';
import { indexedText } from './indexed-text.js';

export interface StoreItemsOptions {
  store: Pick<Store, 'putItem' | 'getItem' | 'deleteItem' | 'searchItems' | 'listItemNamespaces'>;
  /** Semantic search; absent: a query is a case-insensitive text match. */
  embedder?: Embedder;
}

export interface PutItemOptions {
  /** false: not searchable by query; field paths: index those; absent: the whole value. */
  index?: false | readonly string[] | null;
  /** Minutes to live; absent/null: forever. */
  ttl?: number | null;
}

export class StoreItems {
  constructor(private readonly opts: StoreItemsOptions) {}

  get semantic(): boolean {
    return this.opts.embedder !== undefined;
  }

  async put(tenantId: string, namespace: string[], key: string, value: JsonObject, options: PutItemOptions = {}): Promise<void> {
    const searchText = indexedText(value, options.index);
    const embedding = this.opts.embedder && searchText !== null ? ((await this.opts.embedder.embed([searchText]))[0] ?? null) : null;
    await this.opts.store.putItem({ tenantId, namespace, key, value, ttlMinutes: options.ttl ?? null, searchText, embedding });
  }

  get(tenantId: string, namespace: string[], key: string, opts?: { refreshTtl?: boolean }): Promise<StoreItemRecord | undefined> {
    return this.opts.store.getItem(tenantId, namespace, key, opts);
  }

  delete(tenantId: string, namespace: string[], key: string): Promise<boolean> {
    return this.opts.store.deleteItem(tenantId, namespace, key);
  }

  async search(
    tenantId: string,
    namespacePrefix: string[],
    opts: { filter?: StoreItemFilter; limit?: number; offset?: number; query?: string; refreshTtl?: boolean } = {},
  ): Promise<StoreItemHit[]> {
    const query = opts.query?.trim() ? opts.query : undefined;
    const queryVector = query !== undefined && this.opts.embedder ? (await this.opts.embedder.embed([query]))[0] : undefined;
    return this.opts.store.searchItems(tenantId, {
      namespacePrefix,
      limit: opts.limit ?? 10,
      offset: opts.offset ?? 0,
      ...(opts.filter ? { filter: opts.filter } : {}),
      ...(query !== undefined ? { query } : {}),
      ...(queryVector ? { queryVector } : {}),
      ...(opts.refreshTtl ? { refreshTtl: true } : {}),
    });
  }

  listNamespaces(tenantId: string, opts: NamespaceListing): Promise<string[][]> {
    return this.opts.store.listItemNamespaces(tenantId, opts);
  }
}
