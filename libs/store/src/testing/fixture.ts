/** What the parts of the `Store` contract share: unique ids, and a migrated store per describe block. */
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../types.js';
import type { StoreTestDatabase, StoreTestHarness } from './contract.js';

let counter = 0;
/** An id no other test of this process uses (`prefix-<time>-<n>`). */
export const uid = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/**
 * Registers beforeAll/afterAll that open a fresh database of `harness`, migrate it and drop it;
 * the returned function gives the store inside a test.
 */
export function useMigratedStore(harness: StoreTestHarness): () => Store {
  let database: StoreTestDatabase | undefined;
  let store: Store | undefined;
  beforeAll(async () => {
    database = await harness.newDatabase();
    store = database.open();
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
  return () => {
    if (!store) throw new Error('the store is not open (use it inside a test)');
    return store;
  };
}
