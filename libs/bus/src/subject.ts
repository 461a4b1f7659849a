import { InvalidArgumentError } from '@agentloop/core';

/**
 * NATS subject matching: `*` matches exactly one token, `>` (last token only)
 * matches one or more remaining tokens.
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    const tok = p[i];
    if (tok === '>') return s.length > i;
    if (i >= s.length) return false;
    if (tok !== '*' && tok !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Rejects subjects NATS would reject: empty tokens, spaces, or (when publishing) wildcards. */
export function assertValidSubject(subject: string, opts: { wildcards: boolean }): void {
  const tokens = subject.split('.');
  const bad =
    subject.length === 0 ||
    /\s/.test(subject) ||
    tokens.some(
      (t, i) => t === '' || (t === '>' && (!opts.wildcards || i !== tokens.length - 1)) || (!opts.wildcards && t === '*') || (t.length > 1 && /[*>]/.test(t)),
    );
  if (bad) {
    throw new InvalidArgumentError(
      `Invalid subject "${subject}": use dot-separated tokens without spaces${opts.wildcards ? '; `*` and a final `>` are wildcards' : ' or wildcards'}`,
    );
  }
}

/** Absolute deadline for a request: now + timeoutMs, or an earlier deadline already in the headers. */
export function requestDeadline(timeoutMs: number, headerValue: string | undefined): number {
  const own = Date.now() + timeoutMs;
  const inherited = headerValue === undefined ? NaN : Number(headerValue);
  return Number.isFinite(inherited) && inherited < own ? inherited : own;
}

/** Parses the deadline header; undefined when absent or malformed. */
export function parseDeadline(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export function assertTimeout(timeoutMs: number): void {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidArgumentError(`Invalid request timeout ${timeoutMs}: it must be a positive number of milliseconds`);
  }
}
