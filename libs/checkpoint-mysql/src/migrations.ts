/**
 * Schema of the MySQL/MariaDB checkpointer, one statement per version. The
 * index in the list is the version stored in `checkpoint_migrations`; append,
 * never edit. Every statement is re-runnable (MySQL DDL is not transactional).
 *
 * Column sizing, against InnoDB's 3072-byte index key limit:
 * identifiers are VARBINARY (bytes of the UTF-8 string), not utf8mb4 VARCHAR.
 * A utf8mb4 VARCHAR(255) counts 1020 bytes in a key, so the four-part blob key
 * (thread, namespace, channel, version) would need 3 × 1020 + version > 3072.
 * As VARBINARY the same key is 255 + 255 + 255 + 128 = 893 bytes, and
 * comparisons are byte-exact (no case folding, no trailing-space padding) and
 * ordered by code point, which is what `checkpoint_id` ordering (uuid6) and the
 * `writesSortKey` order of pending writes need.
 */
export interface CheckpointTables {
  migrations: string;
  checkpoints: string;
  blobs: string;
  writes: string;
}

/** Longest thread id, namespace, channel or task id, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 255;
export const MAX_CHECKPOINT_ID_BYTES = 64;
export const MAX_VERSION_BYTES = 128;
export const MAX_TASK_PATH_BYTES = 1024;

export function getMigrations(t: CheckpointTables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t.migrations} (
      v INT NOT NULL PRIMARY KEY
    ) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${t.checkpoints} (
      thread_id VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
      checkpoint_ns VARBINARY(${MAX_KEY_BYTES}) NOT NULL DEFAULT '',
      checkpoint_id VARBINARY(${MAX_CHECKPOINT_ID_BYTES}) NOT NULL,
      parent_checkpoint_id VARBINARY(${MAX_CHECKPOINT_ID_BYTES}) NULL,
      type VARCHAR(32) CHARACTER SET ascii NOT NULL,
      checkpoint LONGBLOB NOT NULL,
      metadata LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    ) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${t.blobs} (
      thread_id VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
      checkpoint_ns VARBINARY(${MAX_KEY_BYTES}) NOT NULL DEFAULT '',
      channel VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
      version VARBINARY(${MAX_VERSION_BYTES}) NOT NULL,
      type VARCHAR(32) CHARACTER SET ascii NOT NULL,
      data LONGBLOB NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    ) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${t.writes} (
      thread_id VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
      checkpoint_ns VARBINARY(${MAX_KEY_BYTES}) NOT NULL DEFAULT '',
      checkpoint_id VARBINARY(${MAX_CHECKPOINT_ID_BYTES}) NOT NULL,
      task_id VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
      idx INT NOT NULL,
      channel VARBINARY(${MAX_KEY_BYTES}) NOT NULL,
      type VARCHAR(32) CHARACTER SET ascii NOT NULL,
      data LONGBLOB NOT NULL,
      task_path VARBINARY(${MAX_TASK_PATH_BYTES}) NOT NULL DEFAULT '',
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    ) ENGINE=InnoDB`,
  ];
}
