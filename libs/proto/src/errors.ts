import { create } from '@bufbuild/protobuf';
import { ErrorSchema, type Error as WireError } from './gen/agentloop/v1/common_pb.js';
import { RunStatus } from './gen/agentloop/v1/runs_pb.js';

interface CodedError {
  code?: unknown;
  retryable?: unknown;
  message?: unknown;
}

/** Maps any thrown value to the proto Error; unknown errors become INTERNAL. */
export function toWireError(err: unknown): WireError {
  const e = (err ?? {}) as CodedError;
  const code = typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code) ? e.code : 'INTERNAL';
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown error';
  return create(ErrorSchema, { code, message, retryable: e.retryable === true });
}

/** A wire error as a local Error carrying code and retryable. */
export function fromWireError(w: WireError): Error & { code: string; retryable: boolean } {
  const e = new Error(w.message) as Error & { code: string; retryable: boolean };
  e.name = 'RemoteError';
  e.code = w.code;
  e.retryable = w.retryable;
  return e;
}

export type RunStatusName = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';

const NAMES: Record<number, RunStatusName> = {
  [RunStatus.PENDING]: 'pending',
  [RunStatus.RUNNING]: 'running',
  [RunStatus.SUCCESS]: 'success',
  [RunStatus.ERROR]: 'error',
  [RunStatus.TIMEOUT]: 'timeout',
  [RunStatus.INTERRUPTED]: 'interrupted',
};

export function runStatusName(s: RunStatus): RunStatusName {
  const n = NAMES[s];
  if (!n) throw new Error(`unknown run status ${s}`);
  return n;
}

export function runStatusFromName(n: RunStatusName): RunStatus {
  for (const [k, v] of Object.entries(NAMES)) if (v === n) return Number(k) as RunStatus;
  throw new Error(`unknown run status ${n}`);
}
