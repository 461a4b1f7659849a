export type { DevServer } from './types.js';
export { startNats, type NatsServerOptions } from './nats.js';
export { startRedis, type RedisServerOptions } from './redis.js';
export { startMariaDb, type MariaDbServerOptions } from './mariadb.js';
export { freePort, hasBinary } from './ports.js';
export { startPostgres, type PostgresServerOptions } from './postgres.js';
