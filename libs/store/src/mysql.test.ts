import { afterAll, beforeAll } from 'vitest';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { storeContract } from './testing/index.js';
import { createMysqlStore } from './mysql.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMariaDb();
});
afterAll(async () => {
  await server?.stop();
});

async function admin(sqlText: string): Promise<void> {
  const conn = await createConnection(server.url);
  try {
    await conn.query(sqlText);
  } finally {
    await conn.end();
  }
}

let n = 0;
storeContract({
  name: 'MariaDB',
  async newDatabase() {
    const name = `store_test_${process.pid}_${n++}`;
    await admin(`CREATE DATABASE \`${name}\``);
    const url = server.url.replace(/\/agentloop$/, `/${name}`);
    return { open: () => createMysqlStore({ url }), drop: () => admin(`DROP DATABASE \`${name}\``) };
  },
});
