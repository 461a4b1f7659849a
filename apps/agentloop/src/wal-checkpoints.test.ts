import { describe, expect, it } from 'vitest';
import { BACKGROUND_AUTOCHECKPOINT_PAGES } from '@agentloop/store';
import { walCheckpointsInThread, writerAutocheckpointPages } from './wal-checkpoints.js';

describe('SQLITE_WAL_CHECKPOINTS', () => {
  it('is a thread of its own by default, and the writers checkpoint only past the higher threshold', () => {
    for (const v of [undefined, '', ' thread ']) {
      const env = v === undefined ? {} : { SQLITE_WAL_CHECKPOINTS: v };
      expect(walCheckpointsInThread(env)).toBe(true);
      expect(writerAutocheckpointPages(env)).toBe(BACKGROUND_AUTOCHECKPOINT_PAGES);
    }
  });

  it('is SQLite default with inline', () => {
    expect(walCheckpointsInThread({ SQLITE_WAL_CHECKPOINTS: 'inline' })).toBe(false);
    expect(writerAutocheckpointPages({ SQLITE_WAL_CHECKPOINTS: 'inline' })).toBeUndefined();
  });

  it('rejects anything else with the values it takes', () => {
    expect(() => walCheckpointsInThread({ SQLITE_WAL_CHECKPOINTS: 'background' })).toThrow(/"thread" or "inline", not "background"/);
  });
});
