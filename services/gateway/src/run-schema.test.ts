import { describe, expect, it } from 'vitest';
import { normalizeStreamModes, RunCreateBody, runConfig, runKwargs, wantsEvent } from './run-schema.js';
import { checkpointRef } from './routes/threads.js';

describe('normalizeStreamModes', () => {
  it('defaults to ["values"]', () => {
    expect(normalizeStreamModes(undefined)).toEqual(['values']);
  });

  it('wraps a single mode and de-duplicates a list', () => {
    expect(normalizeStreamModes('updates')).toEqual(['updates']);
    expect(normalizeStreamModes(['values', 'updates', 'values'])).toEqual(['values', 'updates']);
  });
});

describe('wantsEvent', () => {
  it('always passes metadata, error and end', () => {
    for (const e of ['metadata', 'error', 'end']) expect(wantsEvent(e, ['values'])).toBe(true);
  });

  it('passes only the requested modes', () => {
    expect(wantsEvent('values', ['values'])).toBe(true);
    expect(wantsEvent('updates', ['values'])).toBe(false);
  });

  it('serves messages-tuple as messages events and messages as the messages/* family', () => {
    expect(wantsEvent('messages', ['messages-tuple'])).toBe(true);
    expect(wantsEvent('messages/partial', ['messages'])).toBe(true);
    expect(wantsEvent('messages/partial', ['values'])).toBe(false);
  });

  it('follows the base mode for subgraph events', () => {
    expect(wantsEvent('updates|agent:1', ['updates'])).toBe(true);
  });

  it("passes a delegated agent's namespaced events (mode|delegate:<call>) for the requested base mode only", () => {
    expect(wantsEvent('values|delegate:call_1', ['values'])).toBe(true);
    expect(wantsEvent('values|delegate:call_1|delegate:call_2', ['values'])).toBe(true);
    expect(wantsEvent('messages|delegate:call_1', ['messages-tuple'])).toBe(true);
    expect(wantsEvent('messages/partial|delegate:call_1', ['messages'])).toBe(true);
    expect(wantsEvent('values|delegate:call_1', ['updates'])).toBe(false);
  });

  it('passes debug, tasks, checkpoints, custom and events when asked for, and not otherwise', () => {
    for (const m of ['debug', 'tasks', 'checkpoints', 'custom', 'events']) {
      expect(wantsEvent(m, [m])).toBe(true);
      expect(wantsEvent(m, ['values'])).toBe(false);
    }
  });
});

describe('RunCreateBody', () => {
  it('keeps config.configurable as given', () => {
    const body = RunCreateBody.parse({ assistant_id: 'agent', config: { configurable: { model: 'reasoning' }, extra: 1 } });
    expect(body.config).toEqual({ configurable: { model: 'reasoning' }, extra: 1 });
  });

  it('rejects an unknown stream mode', () => {
    expect(RunCreateBody.safeParse({ assistant_id: 'agent', stream_mode: 'bogus' }).success).toBe(false);
  });

  it('rejects a non-http webhook', () => {
    expect(RunCreateBody.safeParse({ assistant_id: 'agent', webhook: 'ftp://x/y' }).success).toBe(false);
  });
});

describe('runKwargs', () => {
  it('stores the request without assistant_id and metadata, unset fields dropped', () => {
    const body = RunCreateBody.parse({ assistant_id: 'agent', input: { messages: [] }, metadata: { a: 1 }, webhook: null });
    expect(runKwargs(body, ['values'])).toEqual({ input: { messages: [] }, stream_mode: ['values'] });
  });
});

describe('runConfig: the checkpoint a run starts from', () => {
  it('puts checkpoint_id (or checkpoint.checkpoint_id/ns) into configurable, keeping the rest of the config', () => {
    const config = { configurable: { model: 'base' }, tags: ['a'] };
    expect(runConfig({ config })).toEqual(config);
    expect(runConfig({ config, checkpoint_id: 'cp1' })).toEqual({ tags: ['a'], configurable: { model: 'base', checkpoint_id: 'cp1', checkpoint_ns: '' } });
    expect(runConfig({ checkpoint: { checkpoint_id: 'cp2', checkpoint_ns: 'ns' } })).toEqual({ configurable: { checkpoint_id: 'cp2', checkpoint_ns: 'ns' } });
    expect(runConfig({ config: null, checkpoint: null, checkpoint_id: null })).toEqual({});
  });
});

describe('checkpointRef: a checkpoint as clients address it', () => {
  it('takes a checkpoint, a config or a bare id; refuses anything else', () => {
    expect(checkpointRef(undefined, 'b')).toBeNull();
    expect(checkpointRef('cp1', 'b')).toEqual({ checkpoint_id: 'cp1', checkpoint_ns: '' });
    expect(checkpointRef({ checkpoint_id: 'cp1', checkpoint_ns: 'x', thread_id: 't' }, 'b')).toEqual({ checkpoint_id: 'cp1', checkpoint_ns: 'x' });
    expect(checkpointRef({ configurable: { checkpoint_id: 'cp1' } }, 'b')).toEqual({ checkpoint_id: 'cp1', checkpoint_ns: '' });
    expect(() => checkpointRef([1], 'b')).toThrow();
    expect(() => checkpointRef({ checkpoint_id: 3 }, 'b')).toThrow();
  });
});
