import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { MySQLSaver, type MySQLSaverOptions } from '../saver.js';

export interface TestSaver {
  saver: MySQLSaver;
  /** URL of the private database the saver uses. */
  url: string;
  /** Closes the saver's pool and drops its database. */
  drop(): Promise<void>;
}

/**
 * A set-up MySQLSaver on a new, empty database of the server at `serverUrl`
 * (e.g. a `startMariaDb()` URL), so tests sharing one server never see each
 * other's checkpoints.
 */
export async function createTestSaver(serverUrl: string, options?: MySQLSaverOptions): Promise<TestSaver> {
  const name = `ckpt_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const admin = async (sqlText: string) => {
    const conn = await createConnection(serverUrl);
    try {
      await conn.query(sqlText);
    } finally {
      await conn.end();
    }
  };
  await admin(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  const saver = MySQLSaver.fromConnString(url.toString(), options);
  await saver.setup();
  return {
    saver,
    url: url.toString(),
    async drop() {
      await saver.end();
      await admin(`DROP DATABASE IF EXISTS \`${name}\``);
    },
  };
}
