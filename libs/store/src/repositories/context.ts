import type { Kysely } from 'kysely';
import type { Database, SqlDialectName } from '../schema.js';

/**
 * What every repository shares: the store's one Kysely instance (one connection pool, and on
 * SQLite one prepared-statement cache), its dialect and its clock. Passed by reference, so the
 * repositories of one `SqlStore` never open connections of their own.
 */
export interface RepositoryContext {
  readonly db: Kysely<Database>;
  readonly dialect: SqlDialectName;
  /** Clock in epoch ms (tests replace it). */
  readonly now: () => number;
}
