/**
 * The MCP client features the broker declares on each connection (beside tools): `roots` (the
 * server's configured list, client-config.ts) and, for servers with `sampling:` set, `sampling`
 * (relayed to the orchestrator running the calling run, sampling-relay.ts), and `elicitation`
 * (form and url modes: answered by the call in flight, elicitation.ts; docs/mcp-client-features.md).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type ClientCapabilities,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerEntry } from './config.js';
import type { ElicitParams } from './elicitation.js';
import type { SamplingParams, SamplingResult } from './sampling-relay.js';

/** The run and tool call a call to a server was made for. */
export interface McpCaller {
  tenantId: string;
  runId: string;
  toolCallId: string;
  /** The tool's name as offered to the model. */
  toolName: string;
  /** Answers the server's elicitation during this call (elicitation.ts); without it the request is declined. */
  elicit?: (server: string, params: ElicitParams) => ElicitResult;
}

/** Answers a server's sampling request on behalf of `caller`'s run. */
export type Sampler = (server: string, caller: McpCaller, params: SamplingParams) => Promise<SamplingResult>;

export function clientCapabilities(entry: Pick<McpServerEntry, 'sampling'>, sampler: Sampler | undefined): ClientCapabilities {
  return { roots: {}, elicitation: { form: {}, url: {} }, ...(entry.sampling?.enabled && sampler ? { sampling: {} } : {}) };
}

/**
 * The caller a server's request is attributed to: the only call in flight on the connection.
 * Refused when several calls (or none) are in flight: a shared connection does not tell whose it is.
 */
function onlyCaller(what: string, inFlight: readonly McpCaller[]): McpCaller {
  if (inFlight.length === 1) return inFlight[0]!;
  throw new McpError(
    ErrorCode.InvalidRequest,
    inFlight.length === 0
      ? `${what} is answered only during a tool call (no call to this server is in flight)`
      : `${what} is answered only when one call to this server is in flight (${inFlight.length} are): the request cannot be attributed to a run`,
  );
}

/**
 * Registers the handlers of the declared features. `callers()` gives the callers of the calls in
 * flight on this connection: a request from the server is attributed to the only one — the call
 * lane makes that the rule for tools that are not read-only — and refused when several calls (or
 * none) are in flight, since a shared connection does not tell which call a request belongs to.
 */
export function installClientFeatures(
  client: Client,
  server: string,
  entry: Pick<McpServerEntry, 'roots' | 'sampling'>,
  callers: () => readonly McpCaller[],
  sampler: Sampler | undefined,
): void {
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: entry.roots.map((r) => ({ uri: r.uri, ...(r.name ? { name: r.name } : {}) })) }));
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    const caller = onlyCaller('Elicitation', callers());
    return caller.elicit ? caller.elicit(server, request.params) : { action: 'decline' };
  });
  if (!entry.sampling?.enabled || !sampler) return;
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const caller = onlyCaller('Sampling', callers());
    try {
      return await sampler(server, caller, request.params);
    } catch (err) {
      throw new McpError(ErrorCode.InternalError, `Sampling failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
}
