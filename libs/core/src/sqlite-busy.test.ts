import { describe, expect, it } from 'vitest';
import { isSqliteBusy, retryWhileSqliteBusy, sqliteBusyBackoffMs } from './sqlite-busy.js';

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe('waiting for another SQLite connection’s lock (issue 9)', () => {
  it('counts SQLITE_BUSY and SQLITE_LOCKED (and their extended codes) as busy, nothing else', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE']) {
      expect(isSqliteBusy(Object.assign(new Error(), { code }))).toBe(true);
    }
    for (const err of [new Error('database is locked'), Object.assign(new Error(), { code: 'SQLITE_CONSTRAINT' }), undefined, null, 'SQLITE_BUSY']) {
      expect(isSqliteBusy(err)).toBe(false);
    }
  });

  it('backs off from about 1 ms, doubling, to about 20 ms', () => {
    for (let i = 0; i < 50; i++) {
      expect(sqliteBusyBackoffMs(0)).toBeGreaterThanOrEqual(0.75);
      expect(sqliteBusyBackoffMs(0)).toBeLessThanOrEqual(1.25);
      expect(sqliteBusyBackoffMs(2)).toBeGreaterThanOrEqual(3);
      expect(sqliteBusyBackoffMs(2)).toBeLessThanOrEqual(5);
      expect(sqliteBusyBackoffMs(40)).toBeGreaterThanOrEqual(15);
      expect(sqliteBusyBackoffMs(40)).toBeLessThanOrEqual(25);
    }
  });

  it('tries again while the attempt is busy, and returns its result', async () => {
    let tries = 0;
    const out = await retryWhileSqliteBusy(() => {
      if (++tries < 3) throw busy();
      return 'done';
    }, Date.now() + 10_000);
    expect(out).toBe('done');
    expect(tries).toBe(3);
  });

  it('throws any other error at once, and the busy error once the deadline has passed', async () => {
    let tries = 0;
    await expect(
      retryWhileSqliteBusy(() => {
        tries++;
        throw new Error('no such table');
      }, Date.now() + 10_000),
    ).rejects.toThrow(/no such table/);
    expect(tries).toBe(1);
    await expect(
      retryWhileSqliteBusy(() => {
        throw busy();
      }, Date.now()),
    ).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
  });
});
