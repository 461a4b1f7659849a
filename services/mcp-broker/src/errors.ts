import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/** A failure of an MCP tool call or of its server, worded for the model (it becomes "Error: <message>"). */
export class McpBrokerError extends AgentLoopError {
  override name = 'McpBrokerError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, options);
  }
}

export class UnknownMcpToolError extends McpBrokerError {
  override name = 'UnknownMcpToolError';
  constructor(tool: string) {
    super('NOT_FOUND', `Unknown tool: ${tool}`);
  }
}

export class DisabledMcpToolError extends McpBrokerError {
  override name = 'DisabledMcpToolError';
  constructor(tool: string) {
    super('NOT_FOUND', `Tool ${tool} is disabled in the MCP configuration`);
  }
}

export class McpArgumentsError extends McpBrokerError {
  override name = 'McpArgumentsError';
  constructor(tool: string, detail: string) {
    super('INVALID_ARGUMENT', `Invalid arguments for ${tool}: ${detail}`);
  }
}

/** The server could not be started or reached (or is in its restart backoff). */
export class McpServerUnavailableError extends McpBrokerError {
  override name = 'McpServerUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, { ...options, retryable: true });
  }
}

/** The call outlived its budget (timeout_ms or the request deadline). */
export class McpCallTimeoutError extends McpBrokerError {
  override name = 'McpCallTimeoutError';
  constructor(tool: string, server: string, budgetMs: number, options?: { cause?: unknown }) {
    // Not retryable: the tool may have had its effect before it was abandoned.
    super('TIMEOUT', `MCP tool ${tool} (server ${server}) did not answer within ${budgetMs} ms; its effect, if any, is unknown`, {
      ...options,
      retryable: false,
    });
  }
}

/** The server answered, but not with a usable result (protocol error, malformed result, closed mid-call). */
export class McpCallFailedError extends McpBrokerError {
  override name = 'McpCallFailedError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('TOOL_FAILED', message, { ...options, retryable: false });
  }
}

/**
 * A remote server refused the call's session (it restarted and forgot it): the call was never
 * executed, so the broker may open a new session and make it again.
 */
export class McpSessionLostError extends McpCallFailedError {
  override name = 'McpSessionLostError';
}

/** The link to a remote server broke while the call was in flight: its effect is unknown. */
export class McpLinkLostError extends McpCallFailedError {
  override name = 'McpLinkLostError';
}

/**
 * The tenant holds no usable token for a server configured for the authorization code flow: the
 * call was not made. Worded for the model, which should tell the user what to do.
 */
export class McpAuthorizationRequiredError extends McpBrokerError {
  override name = 'McpAuthorizationRequiredError';
  constructor(
    readonly server: string,
    detail = 'this tenant has not authorized AgentLoop at it yet',
    options?: { cause?: unknown },
  ) {
    super(
      'PERMISSION_DENIED',
      `MCP server ${server} needs the user's authorization (${detail}); the call was not made. The user must authorize at /mcp/servers/${server}/authorize (POST, then open the authorization_url it returns), then try again.`,
      { ...options, retryable: false },
    );
  }
}
