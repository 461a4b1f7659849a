import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * A workspace failure whose message can be shown as-is — to a model after
 * "Error: " in a tool result (seed 000 §4.3.1), or to an API client. It never
 * contains an absolute host path. Not retryable by default: the same request
 * would fail again. The tool-runner knows it as `ToolError`.
 */
export class WorkspaceError extends AgentLoopError {
  override name = 'WorkspaceError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, { ...options, retryable: options?.retryable ?? false });
  }
}

/** The path resolves (lexically or through a symlink) outside the workspace. */
export class PathOutsideWorkspaceError extends WorkspaceError {
  override name = 'PathOutsideWorkspaceError';
  constructor(input: string) {
    super('PATH_OUTSIDE_WORKSPACE', `Path outside workspace: ${displayPath(input)}`);
  }
}

/** A write outside outputs/, temp/ or uploads/, or a filesystem EACCES/EPERM. */
export class WorkspacePermissionError extends WorkspaceError {
  override name = 'WorkspacePermissionError';
  constructor(detail: string) {
    super('PERMISSION_DENIED', `Permission denied: ${detail}`);
  }
}

/**
 * A path over one of the limits of paths.ts (bytes, bytes of one name, number
 * of segments), refused before any filesystem work. The message names the
 * limit and shows only the head of the path.
 */
export class PathLimitError extends WorkspaceError {
  override name = 'PathLimitError';
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
  }
}

export class FileNotFoundError extends WorkspaceError {
  override name = 'FileNotFoundError';
  constructor(relPath: string, what = 'File') {
    super('NOT_FOUND', `${what} not found: ${displayPath(relPath)}`);
  }
}

/**
 * A path as it may be shown back to a model or client: control characters
 * (NUL included) are escaped so a message stays one printable line.
 */
export function displayPath(p: string): string {
  // eslint-disable-next-line no-control-regex
  return p.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
