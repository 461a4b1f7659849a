import { createMysqlStore } from './mysql.js';
import { createSqliteStore } from './sqlite.js';
import type { Store } from './types.js';

export interface CreateStoreOptions {
  /** When set (cluster mode), the store is MySQL/MariaDB at this URL. */
  mysqlUrl?: string | undefined;
  /** Otherwise (embedded mode), SQLite at this path (`:memory:` allowed). */
  sqlitePath: string;
}

/** MySQL when a URL is given, SQLite otherwise. Call `migrate()` before use. */
export function createStore(opts: CreateStoreOptions): Store {
  return opts.mysqlUrl ? createMysqlStore({ url: opts.mysqlUrl }) : createSqliteStore({ path: opts.sqlitePath });
}
