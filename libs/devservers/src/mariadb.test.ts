import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from 'mysql2/promise';
import { startMariaDb } from './mariadb.js';
import type { DevServer } from './types.js';

async function query<T>(url: string, sqlText: string): Promise<T[]> {
  const conn = await createConnection(url);
  try {
    const [rows] = await conn.query(sqlText);
    return rows as T[];
  } finally {
    await conn.end();
  }
}

describe('startMariaDb', () => {
  let server: DevServer;

  beforeAll(async () => {
    server = await startMariaDb();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the agentloop database at its url', async () => {
    expect(server.url).toBe(`mysql://root@127.0.0.1:${server.port}/agentloop`);
    const rows = await query<{ db: string; cs: string }>(server.url, 'SELECT DATABASE() AS db, @@character_set_database AS cs');
    expect(rows[0]).toEqual({ db: 'agentloop', cs: 'utf8mb4' });
  });

  it('keeps port and data across restart()', async () => {
    await query(server.url, 'CREATE TABLE IF NOT EXISTS kept (v INT)');
    await query(server.url, 'INSERT INTO kept VALUES (42)');
    const port = server.port;
    await server.restart();
    expect(server.port).toBe(port);
    const rows = await query<{ v: number }>(server.url, 'SELECT v FROM kept');
    expect(rows).toEqual([{ v: 42 }]);
  });
});

describe('startMariaDb lifecycle', () => {
  it('refuses connections once stopped', async () => {
    const server = await startMariaDb();
    await query(server.url, 'SELECT 1');
    await server.stop();
    await expect(query(server.url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('runs two servers side by side on different ports', async () => {
    await using a = await startMariaDb({ database: 'one' });
    await using b = await startMariaDb({ database: 'two' });
    expect(a.port).not.toBe(b.port);
    const [ra, rb] = await Promise.all([query<{ db: string }>(a.url, 'SELECT DATABASE() AS db'), query<{ db: string }>(b.url, 'SELECT DATABASE() AS db')]);
    expect([ra[0]?.db, rb[0]?.db]).toEqual(['one', 'two']);
  });

  it('says which binary is missing when mariadbd is not installed', async () => {
    await expect(startMariaDb({ mode: 'binary', binary: '/nonexistent/mariadbd' })).rejects.toThrow(
      /MariaDB server binary not found \(\/nonexistent\/mariadbd\)/,
    );
  });

  it('rejects a database name that is not a plain identifier', async () => {
    await expect(startMariaDb({ mode: 'binary', database: 'x`; DROP' })).rejects.toThrow(/Invalid MariaDB database name/);
  });
});
