import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from './postgres.js';
import type { DevServer } from './types.js';

const BIN_DIR = '/usr/lib/postgresql/15/bin';
const psqlPath = ['/usr/lib/postgresql/15/bin/psql', '/usr/bin/psql'].find((p) => existsSync(p));
const haveServer = existsSync(path.join(BIN_DIR, 'postgres')) || !!process.env.PG_BINDIR;

/** Runs one SQL statement through psql and returns its unaligned, tuples-only output. */
function psql(url: string, sql: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(psqlPath ?? 'psql', ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql], { encoding: 'utf8' }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

describe.skipIf(!haveServer)('startPostgres', () => {
  let server: DevServer;

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the agentloop database at its url with trust auth', async () => {
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/agentloop`);
    expect(
      await psql(
        server.url,
        "SELECT current_database() || ',' || current_user || ',' || pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()",
      ),
    ).toBe('agentloop,postgres,UTF8');
  });

  it('runs with the dev durability settings (fsync off)', async () => {
    expect(await psql(server.url, 'SHOW fsync')).toBe('off');
  });

  it('keeps port and data across restart()', async () => {
    await psql(server.url, 'CREATE TABLE IF NOT EXISTS kept (v INT); INSERT INTO kept VALUES (42)');
    const port = server.port;
    await server.restart();
    expect(server.port).toBe(port);
    expect(await psql(server.url, 'SELECT v FROM kept')).toBe('42');
  });
});

describe.skipIf(!haveServer)('startPostgres lifecycle', () => {
  it('refuses connections and removes its data once stopped', async () => {
    const server = await startPostgres({ database: 'gone' });
    const dataDir = await psql(server.url, 'SHOW data_directory');
    expect(existsSync(dataDir)).toBe(true);
    await server.stop();
    await expect(psql(server.url, 'SELECT 1')).rejects.toThrow(/Connection refused|could not connect/i);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('stops promptly while a client is still connected (fast shutdown)', async () => {
    const server = await startPostgres();
    const idle = psql(server.url, 'SELECT pg_sleep(30)').catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 300));
    await server.stop();
    // The client was cut off by the shutdown instead of holding the server for 30 s.
    expect(await idle).toBeInstanceOf(Error);
  });

  it('runs two servers side by side on different ports', async () => {
    await using a = await startPostgres({ database: 'one' });
    await using b = await startPostgres({ database: 'two' });
    expect(a.port).not.toBe(b.port);
    expect([await psql(a.url, 'SELECT current_database()'), await psql(b.url, 'SELECT current_database()')]).toEqual(['one', 'two']);
  });
});

describe('startPostgres errors', () => {
  it('says which binary is missing when PostgreSQL is not installed', async () => {
    await expect(startPostgres({ binDir: '/nonexistent/pg/bin' })).rejects.toThrow(/PostgreSQL binary "initdb" not found in \/nonexistent\/pg\/bin/);
  });

  it('rejects a database name that is not a plain identifier', async () => {
    await expect(startPostgres({ database: 'x"; DROP' })).rejects.toThrow(/Invalid PostgreSQL database name/);
  });

  it.skipIf(process.getuid?.() !== 0)('names the missing OS user when running as root', async () => {
    await expect(startPostgres({ binDir: BIN_DIR, osUser: 'no_such_user_xyz' })).rejects.toThrow(/OS user "no_such_user_xyz" does not exist/);
  });
});
