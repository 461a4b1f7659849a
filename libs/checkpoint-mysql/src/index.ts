export { MySQLSaver, type MySQLSaverOptions } from './saver.js';
export { MAX_KEY_BYTES, MAX_CHECKPOINT_ID_BYTES, MAX_VERSION_BYTES } from './migrations.js';
export { CheckpointSerializer } from './serde.js';
