import { describe, expect, it } from 'vitest';
import { AgentLoopError, UnavailableError } from './errors.js';
import { isTransientInfraError } from './transient.js';

describe('isTransientInfraError', () => {
  it('tells an unreachable database, bus or socket from a failure of the request itself, through causes', () => {
    expect(isTransientInfraError(new UnavailableError('nats down'))).toBe(true);
    expect(isTransientInfraError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientInfraError(Object.assign(new Error('shutting down'), { code: 'ER_SERVER_SHUTDOWN' }))).toBe(true);
    expect(isTransientInfraError(new Error('graph failed', { cause: Object.assign(new Error('gone'), { code: 'PROTOCOL_CONNECTION_LOST' }) }))).toBe(true);
    expect(isTransientInfraError(new Error('Connection is closed.'))).toBe(true);
    expect(isTransientInfraError(new AgentLoopError('INVALID_ARGUMENT', 'input.messages is empty'))).toBe(false);
    expect(isTransientInfraError(Object.assign(new Error('duplicate'), { code: 'ER_DUP_ENTRY' }))).toBe(false);
    expect(isTransientInfraError(new Error('Script exhausted'))).toBe(false);
    expect(isTransientInfraError(undefined)).toBe(false);
  });
});
