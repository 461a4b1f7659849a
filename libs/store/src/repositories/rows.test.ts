import { describe, expect, it } from 'vitest';
import { toRun } from './rows.js';

const row = (kwargs: string) => ({
  run_id: 'r1',
  thread_id: 't1',
  tenant_id: 'acme',
  assistant_id: 'agent',
  status: 'running',
  created_at: 1,
  updated_at: 2,
  started_at: 2,
  ended_at: null,
  attempts: 1,
  error: null,
  metadata: '{"source":"test"}',
  kwargs,
  multitask_strategy: 'reject',
  deferred: 0,
  job: null,
  seq: 7,
  dead_letter_reason: null,
  dead_lettered_at: null,
  redrives: 0,
});

describe('toRun', () => {
  it('parses the request (kwargs) when it is first read, once, and copies like any field', () => {
    const run = toRun(row('{"input":{"messages":[{"role":"user","content":"hi"}]}}'));
    const first = run.kwargs;
    expect(first).toEqual({ input: { messages: [{ role: 'user', content: 'hi' }] } });
    expect(run.kwargs).toBe(first);
    expect({ ...run, kwargs: undefined }).toMatchObject({ runId: 'r1', metadata: { source: 'test' }, status: 'running' });
    expect({ ...run }.kwargs).toBe(first);
    expect(JSON.parse(JSON.stringify(run)).kwargs).toEqual(first);
    expect(structuredClone(run).kwargs).toEqual(first);
    run.kwargs = { replaced: true };
    expect(run.kwargs).toEqual({ replaced: true });
  });

  it('a stored request that is not a JSON object fails when read, not when the row is read', () => {
    const run = toRun(row('[1,2]'));
    expect(run.runId).toBe('r1');
    expect(() => run.kwargs).toThrow(/Stored run kwargs is not a JSON object/);
  });
});
