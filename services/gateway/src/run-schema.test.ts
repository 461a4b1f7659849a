import { describe, expect, it } from 'vitest';
import { normalizeStreamModes, RunCreateBody, runKwargs, wantsEvent } from './run-schema.js';

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
