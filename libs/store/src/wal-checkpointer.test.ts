import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKGROUND_AUTOCHECKPOINT_PAGES, WalCheckpointer, type WalCheckpointStats } from './wal-checkpointer.js';

/** A writer as embedded mode opens one while a WalCheckpointer runs: WAL, NORMAL, the higher threshold. */
function openWriter(file: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${BACKGROUND_AUTOCHECKPOINT_PAGES}`);
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return db;
}

/** `rows` rows of ~2 KB, each committed alone (each commit appends its pages to the WAL). */
function writeRows(db: BetterSqlite3.Database, rows: number): void {
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  for (let i = 0; i < rows; i++) insert.run('x'.repeat(2000) + i);
}

async function until<T>(what: () => Promise<T | undefined>, label: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await what();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${label}`);
}

const statsOf = async (c: WalCheckpointer, file: string): Promise<WalCheckpointStats> => (await c.stats())!.find((s) => s.file === file)!;

describe('WalCheckpointer', () => {
  let dir: string;
  let file: string;
  const running: WalCheckpointer[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-wal-'));
    file = path.join(dir, 'data.sqlite');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const start = (files: string[], warnings: unknown[] = []): WalCheckpointer => {
    const c = WalCheckpointer.start({ files, intervalMs: 5, logger: { warn: (obj: unknown) => void warnings.push(obj) } });
    running.push(c);
    return c;
  };

  it('copies the pages a writer commits into the database file while the writer keeps writing', async () => {
    const db = openWriter(file);
    writeRows(db, 400); // ~200 pages: far below the writer's own threshold, so only the thread copies them
    const before = statSync(file).size;
    const c = start([file]);
    const s = await until(async () => {
      const st = await statsOf(c, file);
      return st.pagesCopied >= 200 ? st : undefined;
    }, 'the WAL copied');
    expect(s.checkpoints).toBeGreaterThan(0);
    // The rows' pages are in the database file itself now, not only in the WAL.
    expect(statSync(file).size).toBeGreaterThan(before + 150 * 4096);
    writeRows(db, 10);
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(410);
    db.close();
  });

  it("leaves the WAL bounded by the writers' own threshold: the thread holds nothing that keeps the WAL from starting over", async () => {
    const db = openWriter(file);
    // A low threshold stands in for BACKGROUND_AUTOCHECKPOINT_PAGES, so a few thousand rows cross it often.
    db.pragma('wal_autocheckpoint = 300');
    const c = start([file]);
    for (let batch = 0; batch < 30; batch++) {
      writeRows(db, 100);
      // The thread checkpoints between (and during) the batches, as it does between a server's commits.
      await new Promise((r) => setTimeout(r, 2));
    }
    expect((await statsOf(c, file)).pagesCopied).toBeGreaterThan(0);
    // 3,000 rows of ~2 KB are over 1,500 pages; a WAL that never started over would hold them all.
    expect(statSync(`${file}-wal`).size).toBeLessThan(700 * 4096);
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(3000);
    db.close();
  });

  it('reports a file it cannot open once, checkpoints the others, and stops cleanly', async () => {
    const db = openWriter(file);
    writeRows(db, 50);
    const warnings: unknown[] = [];
    const missing = path.join(dir, 'missing.sqlite');
    const c = start([missing, file], warnings);
    await until(async () => ((await statsOf(c, file)).pagesCopied > 0 ? true : undefined), 'the existing file copied');
    await until(async () => (warnings.length > 0 ? true : undefined), 'a warning');
    await new Promise((r) => setTimeout(r, 50));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ file: missing });
    await c.stop();
    await c.stop();
    expect(await c.stats()).toBeUndefined();
    db.close();
  });
});
