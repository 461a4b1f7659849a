import { AgentLoopError } from '@agentloop/core';

/** The run asked for a model this deployment cannot provide. Not retryable. */
export class ModelConfigError extends AgentLoopError {
  override name = 'ModelConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, { ...options, retryable: false });
  }
}

/** The run's input or config is unusable. Not retryable. */
export class RunInputError extends AgentLoopError {
  override name = 'RunInputError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, { ...options, retryable: false });
  }
}
