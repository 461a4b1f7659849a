import { sql } from 'kysely';
import type { SqlDialectName } from '../schema.js';

/**
 * The column types and table options migrations from 0011 on share, per dialect. MySQL: ids as
 * bounded varchars (they sit in primary keys and indexes), documents as longtext, times as epoch
 * milliseconds in bigint, and every table InnoDB with a binary collation so ids compare exactly;
 * SQLite: text and integer.
 */
export function columnTypes(dialect: SqlDialectName) {
  const mysql = dialect === 'mysql';
  return {
    mysql,
    /** Tenant, thread, run, assistant, cron ids. */
    id: mysql ? 'varchar(128)' : 'text',
    /** Small enums ("delete" | "keep"...). */
    short: mysql ? 'varchar(32)' : 'text',
    /** Longer keys that still sit in a primary key (store namespaces and item keys). */
    path: mysql ? 'varchar(256)' : 'text',
    millis: mysql ? 'bigint' : 'integer',
    /** JSON documents and free text. */
    doc: (mysql ? sql`longtext` : 'text') as 'text',
    /** `$call` it on a createTable builder. */
    tableOptions: <T extends { modifyEnd(s: unknown): T }>(b: T): T =>
      mysql ? b.modifyEnd(sql`engine=InnoDB default charset=utf8mb4 collate=utf8mb4_bin`) : b,
  } as const;
}
