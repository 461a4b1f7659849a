import { describe, expect, it } from 'vitest';
import { formatSse, parseLastEventId } from './sse.js';
import { RequestValidationError } from './errors.js';

describe('formatSse', () => {
  it('frames event, data and id followed by a blank line', () => {
    expect(formatSse({ event: 'values', data: '{"a":1}', id: 7 })).toBe('event: values\ndata: {"a":1}\nid: 7\n\n');
  });

  it('splits multi-line data into one data field per line', () => {
    expect(formatSse({ event: 'values', data: '{\n"a": 1\n}' })).toBe('event: values\ndata: {\ndata: "a": 1\ndata: }\n\n');
  });

  it('strips newlines from the event name and id so they cannot inject fields', () => {
    expect(formatSse({ event: 'end\ndata: x', data: 'null', id: '1\nevent: y' })).toBe('event: enddata: x\ndata: null\nid: 1event: y\n\n');
  });
});

describe('parseLastEventId', () => {
  it('returns 0 when the header is absent', () => {
    expect(parseLastEventId(undefined)).toBe(0);
  });

  it('parses a numeric id', () => {
    expect(parseLastEventId('42')).toBe(42);
  });

  it('reads "-1" (useStream replaying a run it rejoins) as the start of the stream', () => {
    expect(parseLastEventId('-1')).toBe(0);
  });

  it('rejects another negative id', () => {
    expect(() => parseLastEventId('-2')).toThrow(RequestValidationError);
  });

  it('rejects a non-numeric id with a 422 naming the header', () => {
    expect(() => parseLastEventId('abc')).toThrow(RequestValidationError);
    try {
      parseLastEventId('abc');
    } catch (err) {
      expect((err as RequestValidationError).issues[0]?.path).toBe('headers.last-event-id');
    }
  });
});
