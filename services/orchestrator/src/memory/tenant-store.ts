/**
 * LangGraph's `BaseStore` over AgentLoop's memory store (issue 12), bound to one tenant: what a
 * run's graph receives as its store (`config.store`), so nothing a node does with it can reach
 * another tenant's items. One instance per run.
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { StoreItemRecord, StoreItems } from '@agentloop/store';

const toItem = (r: StoreItemRecord): Item => ({ namespace: r.namespace, key: r.key, value: r.value, createdAt: r.createdAt, updatedAt: r.updatedAt });

export class TenantMemoryStore extends BaseStore {
  constructor(
    private readonly items: StoreItems,
    readonly tenantId: string,
  ) {
    super();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // In order: a put followed by a get of the same item must see it.
    for (const op of operations) results.push(await this.run(op));
    return results as OperationResults<Op>;
  }

  private async run(op: Operation): Promise<Item | null | SearchItem[] | string[][] | void> {
    if ('namespacePrefix' in op) return this.searchOne(op);
    if ('value' in op) return this.putOne(op);
    if ('key' in op) return this.getOne(op);
    return this.listOne(op);
  }

  private async getOne(op: GetOperation): Promise<Item | null> {
    const item = await this.items.get(this.tenantId, op.namespace, op.key);
    return item ? toItem(item) : null;
  }

  private async putOne(op: PutOperation): Promise<void> {
    if (op.value === null) {
      await this.items.delete(this.tenantId, op.namespace, op.key);
      return;
    }
    await this.items.put(this.tenantId, op.namespace, op.key, op.value, op.index !== undefined ? { index: op.index } : {});
  }

  private async searchOne(op: SearchOperation): Promise<SearchItem[]> {
    const hits = await this.items.search(this.tenantId, op.namespacePrefix, {
      limit: op.limit ?? 10,
      offset: op.offset ?? 0,
      ...(op.filter ? { filter: op.filter } : {}),
      ...(op.query ? { query: op.query } : {}),
    });
    return hits.map((h) => ({ ...toItem(h), ...(h.score !== null ? { score: h.score } : {}) }));
  }

  private listOne(op: ListNamespacesOperation): Promise<string[][]> {
    const prefix = op.matchConditions?.find((c) => c.matchType === 'prefix')?.path;
    const suffix = op.matchConditions?.find((c) => c.matchType === 'suffix')?.path;
    return this.items.listNamespaces(this.tenantId, {
      limit: op.limit,
      offset: op.offset,
      ...(prefix ? { prefix } : {}),
      ...(suffix ? { suffix } : {}),
      ...(op.maxDepth !== undefined ? { maxDepth: op.maxDepth } : {}),
    });
  }
}
