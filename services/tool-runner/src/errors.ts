import { WorkspaceError as ToolError, displayPath } from '@agentloop/workspace';

export { WorkspaceError as ToolError, PathOutsideWorkspaceError, WorkspacePermissionError, FileNotFoundError, displayPath } from '@agentloop/workspace';

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
    super('TIMEOUT', `Tool ${displayPath(tool)} timed out: it did not finish within ${budgetMs} ms`);
  }
}
