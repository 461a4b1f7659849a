import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * A failure the model should read as-is. `message` is the user-facing text
 * that follows "Error: " in the tool result (seed 000 §4.3.1), e.g.
 * "File not found: uploads/x.txt". It never contains an absolute host path.
 * Tool failures are not retryable by default: the same call would fail again.
 */
export class ToolError extends AgentLoopError {
  override name = 'ToolError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, { ...options, retryable: options?.retryable ?? false });
  }
}

/** The path resolves (lexically or through a symlink) outside the workspace. */
export class PathOutsideWorkspaceError extends ToolError {
  override name = 'PathOutsideWorkspaceError';
  constructor(input: string) {
    super('PATH_OUTSIDE_WORKSPACE', `Path outside workspace: ${displayPath(input)}`);
  }
}

/** A write outside outputs/, temp/ or uploads/, or a filesystem EACCES/EPERM. */
export class WorkspacePermissionError extends ToolError {
  override name = 'WorkspacePermissionError';
  constructor(detail: string) {
    super('PERMISSION_DENIED', `Permission denied: ${detail}`);
  }
}

export class FileNotFoundError extends ToolError {
  override name = 'FileNotFoundError';
  constructor(relPath: string, what = 'File') {
    super('NOT_FOUND', `${what} not found: ${displayPath(relPath)}`);
  }
}

export class ToolArgumentsError extends ToolError {
  override name = 'ToolArgumentsError';
  constructor(tool: string, detail: string) {
    super('INVALID_ARGUMENT', `Invalid arguments for ${tool}: ${detail}`);
  }
}

export class UnknownToolError extends ToolError {
  override name = 'UnknownToolError';
  constructor(tool: string) {
    super('NOT_FOUND', `Unknown tool: ${displayPath(tool)}`);
  }
}

/** The tool was discovered but is disabled, and the call did not come from an @mention. */
export class ToolDisabledError extends ToolError {
  override name = 'ToolDisabledError';
  constructor(tool: string) {
    super('NOT_FOUND', `Tool ${displayPath(tool)} is not enabled; it can be used when the user mentions it (@${displayPath(tool)})`);
  }
}

/** The tool outlived its budget (the request deadline or TOOL_DEFAULT_TIMEOUT_MS) and was abandoned. */
export class ToolTimeoutError extends ToolError {
  override name = 'ToolTimeoutError';
  constructor(tool: string, budgetMs: number) {
    // Not retryable: the tool may still have had an effect before it was abandoned.
    super('TIMEOUT', `Tool ${tool} timed out after ${budgetMs} ms`);
  }
}

/**
 * A path as it may be shown back to the model: control characters (NUL
 * included) are escaped so a message stays one printable line.
 */
export function displayPath(p: string): string {
  // eslint-disable-next-line no-control-regex
  return p.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
