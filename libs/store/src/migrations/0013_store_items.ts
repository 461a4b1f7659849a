/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0013: the long-term memory store (issue 12), LangGraph Platform's `/store/items`.
 *
 * One row per (tenant, namespace, key). The namespace is stored as its labels joined with "."
 * (labels never contain "."), so a namespace prefix is a range of the primary key:
 * `namespace = 'a.b' OR namespace >= 'a.b.' AND namespace < 'a.b/'` ("/" follows "." in every
 * collation we use: SQLite BINARY and MySQL utf8mb4_bin). Sizes keep the key under InnoDB's
 * 3072-byte limit: 128 + 256 + 256 characters of at most 4 bytes.
 *
 * `expires_at` (epoch ms, NULL = never) makes expired rows invisible at once; a sweeper deletes
 * them later through the `store_items_expires_idx` index. `embedding` holds the item's vector as
 * JSON when an embeddings endpoint is configured; `search_text` the indexed text (NULL: `index`
 * false, never matched by a query).
 */
export function storeItems(dialect: SqlDialectName): Migration {
  const { mysql, id, path, millis, doc, tableOptions: options } = columnTypes(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('store_items')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('namespace', path, (c) => c.notNull())
        .addColumn('item_key', path, (c) => c.notNull())
        .addColumn('value', doc, (c) => c.notNull())
        .addColumn('search_text', doc)
        .addColumn('embedding', doc)
        .addColumn('created_at', millis, (c) => c.notNull())
        .addColumn('updated_at', millis, (c) => c.notNull())
        .addColumn('ttl_ms', millis)
        .addColumn('expires_at', millis)
        .addPrimaryKeyConstraint('store_items_pk', ['tenant_id', 'namespace', 'item_key'])
        .$call(options)
        .execute();
      try {
        await db.schema
          .createIndex('store_items_expires_idx')
          .$call((b) => (mysql ? b : b.ifNotExists()))
          .on('store_items')
          .columns(['expires_at'])
          .execute();
      } catch (err) {
        // ER_DUP_KEYNAME: created by an interrupted earlier attempt.
        if ((err as { errno?: number }).errno !== 1061) throw err;
      }
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('store_items').ifExists().execute();
    },
  };
}
